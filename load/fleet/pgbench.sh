#!/usr/bin/env bash
# PostgreSQL alone on the statements of a build start (load/fleet/pgbench-start.sql, written
# from a real start, claim to first command: load/fleet/pgbench-start.ts), on the benchmark
# cluster (load/bench/cluster.sh, a fresh database `fleet_pgbench`): one master, one worker,
# 1,000 builders, REQUESTS pending requests (one build set each, on one source stamp, as the
# fleet's queue has them: load/fleet/queue.ts), then pgbench at each of CLIENTS connections
# for SECONDS_EACH in each protocol of PROTOCOLS. Prints pgbench's tps (one build start each)
# and the CPU the cluster's processes spent a start, as phase S prints the masters' (costs.ts:
# the postmaster, its children, and those that ended), which moves less with others' load
# than a rate does.
# PROTOCOLS: pgbench's -M for each round, `prepared` by default; `extended` is the masters'
# own (an unnamed statement parsed and planned at each call, as node-postgres sends a query
# with parameters): load/results/fleet.md, 2026-11-29 02:17, has both in turns. `simple`
# cannot run the script: pgbench writes a variable's text into the statement unquoted there,
# and the script's values are text.
# CLAIMS=seeded: every request claimed while seeding, and the script run without its first
# transaction (the claim): a master's pass claims all it can start in one transaction (phase S:
# 15 passes for 1,000 starts), where the script claims one request a start; the two figures
# bracket PostgreSQL's limit for what phase S makes of a start.
# CONNECT=new: every start on a new connection (pgbench -C), whose backend plans each statement
# afresh and loads the catalog's entries it needs: what a backend costs to warm, against the
# same run on kept connections (load/results/fleet.md, 2026-11-29 08:20). ONLY=connect: the
# script is `SELECT 1` alone, so with CONNECT=new a connection's own cost.
# RATE=N: the starts held to N a second in all (pgbench -R), so that rounds at different CLIENTS
# do the same work a second: what PostgreSQL spends a start with many backends writing at once
# against few, at the masters' own rate (load/results/fleet.md, 2026-11-29 22:50).
# SEED=only: create and seed the database (REQUESTS requests) and stop; SEED=kept: run on the
# database a SEED=only left, without seeding (its requests are used up in order, REQUESTS is
# not read): what phase S's pairs do between its bursts (load/fleet/pairs.ts).
#
#   BENCH_PG_PORT=28440 load/fleet/pgbench.sh            (CLIENTS="1 8", SECONDS_EACH=20)
#   BENCH_PG_PORT=28440 CLIENTS=8 PROTOCOLS="extended prepared extended prepared" load/fleet/pgbench.sh
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/deploy/local/lib.sh"
cd "$ROOT"
PROTOCOLS="${PROTOCOLS:-prepared}"
CLIENTS="${CLIENTS:-1 8}"
SECONDS_EACH="${SECONDS_EACH:-20}"
for m in $PROTOCOLS; do
  case "$m" in extended | prepared) ;; *) die "PROTOCOLS: extended or prepared, not $m (see the top of $0)" ;; esac
done
# Each start takes a request of its own: enough for 3,000 starts a second in every round, above
# any rate measured (932/s, fleet.md 02:17), so that no client runs out and aborts.
rounds=$(($(wc -w <<<"$PROTOCOLS") * $(wc -w <<<"$CLIENTS")))
REQUESTS="${REQUESTS:-$((3000 * SECONDS_EACH * rounds))}"
SCRIPT=load/fleet/pgbench-start.sql
SEED_CLAIMS=
case "${CLAIMS:-}" in
  "") ;;
  seeded)
    SCRIPT="$(mktemp)"
    trap 'rm -f "$SCRIPT"' EXIT
    awk '!done && /^BEGIN;$/ { skip = 1 } skip && /^COMMIT;$/ { skip = 0; done = 1; next } !skip' \
      load/fleet/pgbench-start.sql >"$SCRIPT"
    # What was left out is the claim, and only it.
    [ "$(diff load/fleet/pgbench-start.sql "$SCRIPT" | grep -c 'INSERT INTO buildrequest_claims')" = 1 ] ||
      die "the script's first transaction is not the claim"
    SEED_CLAIMS="INSERT INTO buildrequest_claims (brid, masterid, claimed_at) SELECT id, 1, 0 FROM buildrequests;"
    ;;
  *) die "CLAIMS: empty or seeded, not $CLAIMS" ;;
esac
RATE_ARG=
case "${RATE:-}" in "") ;; *[!0-9]* | 0) die "RATE: a number of starts a second, not $RATE" ;; *) RATE_ARG="-R $RATE" ;; esac
CONNECT_ARG=
case "${CONNECT:-}" in "") ;; new) CONNECT_ARG=-C ;; *) die "CONNECT: empty or new, not $CONNECT" ;; esac
case "${ONLY:-}" in
  "") ;;
  connect)
    SCRIPT="$(mktemp)"
    trap 'rm -f "$SCRIPT"' EXIT
    echo 'SELECT 1;' >"$SCRIPT"
    ;;
  *) die "ONLY: empty or connect, not $ONLY" ;;
esac
case "${SEED:-}" in "" | only | kept) ;; *) die "SEED: empty, only or kept, not $SEED" ;; esac
if [ "${SEED:-}" = kept ]; then
  URL="$(load/bench/cluster.sh url fleet_pgbench)"
  psql "$URL" -qAt -c "SELECT 1 FROM pg_class WHERE relname = 'fleet_next'" | grep -q 1 ||
    die "SEED=kept: no database seeded by SEED=only"
else
URL="$(load/bench/cluster.sh db fleet_pgbench)"
psql "$URL" -qAt -v ON_ERROR_STOP=1 <<SQL
INSERT INTO masters (name, name_hash, active, last_active) VALUES ('bench', md5('bench'), 1, 0);
INSERT INTO workers (name, info, paused, graceful) VALUES ('w', '{}', 0, 0);
INSERT INTO builders (name, name_hash) SELECT 'fleet-' || g, md5('fleet-' || g) FROM generate_series(1, 1000) g;
INSERT INTO sourcestamps (ss_hash, branch, revision, repository, codebase, project, created_at)
  VALUES (md5('fleet'), '', '', '', '', '', 0);
WITH bs AS (
  INSERT INTO buildsets (reason, submitted_at, complete, results)
  SELECT 'pgbench', 0, 0, -1 FROM generate_series(1, $REQUESTS) RETURNING id),
ss AS (INSERT INTO buildset_sourcestamps (buildsetid, sourcestampid) SELECT id, 1 FROM bs)
INSERT INTO buildrequests (buildsetid, builderid, priority, complete, results, submitted_at, waited_for)
SELECT id, 1 + id % 1000, 0, 0, -1, 0, 0 FROM bs;
CREATE SEQUENCE fleet_next;
$SEED_CLAIMS
-- The ids the script names before their rows exist (ROLES in load/fleet/pgbench-start.ts): a
-- build's and its log's are its request's, its steps' twice that and one more, each from the
-- session's settings that the script's first statement sets. The masters' ids come from the
-- sequences; pgbench cannot read an id out of the JSON their INSERTs answer.
ALTER TABLE builds ALTER COLUMN id SET DEFAULT current_setting('fleet.brid')::int;
ALTER TABLE logs ALTER COLUMN id SET DEFAULT current_setting('fleet.brid')::int;
CREATE FUNCTION fleet_step_id() RETURNS int LANGUAGE sql VOLATILE
  AS \$\$ SELECT set_config('fleet.step', (current_setting('fleet.step')::int + 1)::text, false)::int \$\$;
ALTER TABLE steps ALTER COLUMN id SET DEFAULT fleet_step_id();
-- The whole database, as before; the catalogue's "only superuser can vacuum" warnings unsaid.
SET client_min_messages = error;
VACUUM ANALYZE;
SQL
fi
if [ "${SEED:-}" = only ]; then
  echo "$REQUESTS requests seeded in fleet_pgbench"
  exit 0
fi
# The cluster's CPU ticks so far: the postmaster's own and its ended children's (fields 14-17
# of /proc/PID/stat), and its live children's own (14-15), once this database's backends
# have ended (an ending backend's ticks reach the postmaster only once it is gone).
PM="$(head -1 "$ROOT/.data/bench/pg/postmaster.pid")"
pg_ticks() {
  while pgrep -P "$PM" -f 'fleet_pgbench' >/dev/null; do sleep 0.1; done
  # cat, not awk's own reading: a process gone since the glob must not end the sum early.
  { cat /proc/[0-9]*/stat 2>/dev/null || true; } |
    awk -v pm="$PM" '$1 == pm { t += $14 + $15 + $16 + $17 } $4 == pm { t += $14 + $15 } END { print t + 0 }'
}
if [ "${SEED:-}" = kept ]; then seeded="fleet_pgbench as seeded before"; else seeded="$REQUESTS requests"; fi
echo "$seeded${CLAIMS:+, claims $CLAIMS}; load average (1 min) before: $(cut -d' ' -f1 /proc/loadavg)"
for m in $PROTOCOLS; do
  for c in $CLIENTS; do
    t0="$(pg_ticks)"
    out="$(pgbench -n -M "$m" $CONNECT_ARG $RATE_ARG -c "$c" -j "$c" -T "$SECONDS_EACH" -f "$SCRIPT" "$URL" 2>&1 || true)"
    t1="$(pg_ticks)"
    n="$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")"
    echo "-M $m, clients $c: $(grep -E '^tps|error|aborted' <<<"$out" | head -2 | tr '\n' ' ' | sed 's/ *$//')" \
      "PostgreSQL CPU a start $(awk -v t="$((t1 - t0))" -v n="${n:-0}" -v hz="$(getconf CLK_TCK)" \
        'BEGIN { if (n > 0) printf "%.2f ms", 1000 * t / hz / n; else print "unknown" }');" \
      "load average (1 min) $(cut -d' ' -f1 /proc/loadavg)"
  done
done
