#!/usr/bin/env bash
# PostgreSQL alone on the writes of a build start (load/fleet/pgbench-start.sql), on the
# benchmark cluster (load/bench/cluster.sh, a fresh database `fleet_pgbench`): one master,
# 1,000 builders, REQUESTS pending requests (one build set each), then pgbench -M prepared at
# each of CLIENTS connections for SECONDS. Prints pgbench's tps (one build start each).
# PROTOCOLS: pgbench's -M for each round, `prepared` by default; `extended` is the masters'
# own (an unnamed statement parsed and planned at each call, as node-postgres sends a query
# with parameters): load/results/fleet.md, 2026-11-29 02:17, has both in turns.
#
#   BENCH_PG_PORT=28440 load/fleet/pgbench.sh            (CLIENTS="1 8", SECONDS_EACH=20)
#   BENCH_PG_PORT=28440 CLIENTS=8 PROTOCOLS="extended prepared extended prepared" load/fleet/pgbench.sh
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/deploy/local/lib.sh"
cd "$ROOT"
URL="$(load/bench/cluster.sh db fleet_pgbench)"
psql "$URL" -qAt -v ON_ERROR_STOP=1 <<SQL
INSERT INTO masters (name, name_hash, active, last_active) VALUES ('bench', md5('bench'), 1, 0);
INSERT INTO workers (name, info, paused, graceful) VALUES ('w', '{}', 0, 0);
INSERT INTO builders (name, name_hash) SELECT 'fleet-' || g, md5('fleet-' || g) FROM generate_series(1, 1000) g;
WITH bs AS (
  INSERT INTO buildsets (reason, submitted_at, complete, results)
  SELECT 'pgbench', 0, 0, -1 FROM generate_series(1, ${REQUESTS:-300000}) RETURNING id)
INSERT INTO buildrequests (buildsetid, builderid, priority, complete, results, submitted_at, waited_for)
SELECT id, 1 + id % 1000, 0, 0, -1, 0, 0 FROM bs;
CREATE SEQUENCE fleet_next;
-- The whole database, as before; the catalogue's "only superuser can vacuum" warnings unsaid.
SET client_min_messages = error;
VACUUM ANALYZE;
SQL
echo "load average (1 min) before: $(cut -d' ' -f1 /proc/loadavg)"
for m in ${PROTOCOLS:-prepared}; do
  for c in ${CLIENTS:-1 8}; do
    echo "-M $m, clients $c: $(pgbench -n -M "$m" -c "$c" -j "$c" -T "${SECONDS_EACH:-20}" -f load/fleet/pgbench-start.sql "$URL" 2>&1 |
      grep -E '^tps|error|aborted' | head -2 | tr '\n' ' '); load average (1 min) $(cut -d' ' -f1 /proc/loadavg)"
  done
done
