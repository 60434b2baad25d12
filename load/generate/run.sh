#!/usr/bin/env bash
# Fill a freshly migrated database with the load data of generate.sql, then VACUUM ANALYZE.
#
#   DATABASE_URL=postgresql://... SCALE=1 load/generate/run.sh
#   load/generate/run.sh postgresql://... 0.01          (the same, as arguments)
#
# SCALE 1 is the issue's data set (1M changes, 500k builds, ...); SCALE 0.01 the 10k-row
# variant (10k changes, 5k builds) for the "1M rows vs 10k rows" comparison. HUGE_LINES
# (default 1,000,000, whatever the scale) is the length of the one huge stdio log.
# BUILDERS (default 5, the oracle's) and WORKERS (default 3) make the many-builders variant
# of issue 34 §3, the builds spread over all the builders, each tagged and with 3 workers:
#   BUILDERS=10000 WORKERS=1000 load/generate/run.sh postgresql://... 1
# The database must be empty (use load/bench/cluster.sh db NAME for a fresh one).
# Prints each statement's time, the rows made, the ids the benchmarks use, the total time.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
URL="${1:-${DATABASE_URL:?set DATABASE_URL or pass it as the first argument}}"
SCALE="${2:-${SCALE:-1}}"
HUGE_LINES="${HUGE_LINES:-1000000}"
BUILDERS="${BUILDERS:-5}"
WORKERS="${WORKERS:-3}"
# SET=fleet: issue 35's ten million builds (fleet.sql) instead of generate.sql's set; DETAIL
# (default 1,000,000) is how many of the newest builds keep their logs and properties.
SET="${SET:-generate}"
DETAIL="${DETAIL:-1000000}"
STEPS="${STEPS:-10000000}"   # fleet: how many of the newest builds have their 5 steps
[[ "$SET" =~ ^(generate|fleet)$ ]] || { echo "SET must be generate or fleet" >&2; exit 2; }
[[ "$DETAIL$STEPS" =~ ^[0-9]+$ ]] || { echo "DETAIL and STEPS must be whole numbers" >&2; exit 2; }
[[ "$SCALE" =~ ^[0-9]*\.?[0-9]+$ ]] || { echo "SCALE must be a positive number" >&2; exit 2; }
[[ "$BUILDERS" =~ ^[0-9]+$ && "$WORKERS" =~ ^[0-9]+$ ]] || { echo "BUILDERS and WORKERS must be integers" >&2; exit 2; }
[[ "$HUGE_LINES" =~ ^[0-9]+$ ]] && [ "$HUGE_LINES" -ge 1 ] || { echo "HUGE_LINES must be a positive integer" >&2; exit 2; }
command -v psql >/dev/null || { echo "psql is missing (apt-get install postgresql-client)" >&2; exit 1; }

q() { psql "$URL" -X -q -v ON_ERROR_STOP=1 "$@"; }
t0=$(date +%s.%N)
echo "generating $SET.sql at scale $SCALE (huge log: $HUGE_LINES lines, $BUILDERS builders, $WORKERS workers, detail: $DETAIL builds) into ${URL%%\?*}" | sed -E 's#//([^:]+):[^@]*@#//\1:***@#'
q -v scale="$SCALE" -v huge_lines="$HUGE_LINES" -v builders="$BUILDERS" -v workers="$WORKERS" -v detail="$DETAIL" -v steps="$STEPS" -f "$HERE/$SET.sql"
t1=$(date +%s.%N)
echo "VACUUM ANALYZE"
# every table of ours (public: Buildbot's, flotilla: our bookkeeping); not the catalogs,
# which only a superuser may vacuum. Autovacuum workers that the inserts woke hold
# snapshots that keep VACUUM from marking pages all-visible; once they are done, a second,
# plain VACUUM does, so that index-only scans skip the heap as on a settled database.
tables=$(q -At -c "SELECT string_agg(format('%I.%I', schemaname, tablename), ', ' ORDER BY 1)
                   FROM pg_tables WHERE schemaname IN ('public', 'flotilla')")
q -c "VACUUM ANALYZE $tables"
# Our own bookkeeping tables (schema flotilla) are rewritten compactly: the bulk load passes
# transient rows through them (every request is unclaimed until its claim is inserted, so
# a set of unclaimed requests grows to 500,000 rows and shrinks back to 2,000), which a
# live system, where requests are claimed one by one, never piles up.
own=$(q -At -c "SELECT string_agg(format('%I.%I', schemaname, tablename), ', ' ORDER BY 1)
                FROM pg_tables WHERE schemaname = 'flotilla'")
[ -n "$own" ] && q -c "VACUUM (FULL, ANALYZE) $own"
for _ in $(seq 1 120); do
  [ "$(q -At -c "SELECT count(*) FROM pg_stat_activity
                 WHERE datname = current_database() AND backend_type = 'autovacuum worker'")" = 0 ] && break
  sleep 0.5
done
q -c "VACUUM $tables"
t2=$(date +%s.%N)

echo
echo "rows made:"
q -P footer=off -c "
  SELECT t AS table, n AS rows FROM (VALUES
    ('builders', (SELECT count(*) FROM builders)), ('builders_tags', (SELECT count(*) FROM builders_tags)),
    ('workers', (SELECT count(*) FROM workers)), ('configured_workers', (SELECT count(*) FROM configured_workers)),
    ('changes', (SELECT count(*) FROM changes)), ('change_files', (SELECT count(*) FROM change_files)),
    ('sourcestamps', (SELECT count(*) FROM sourcestamps)), ('buildsets', (SELECT count(*) FROM buildsets)),
    ('buildset_sourcestamps', (SELECT count(*) FROM buildset_sourcestamps)),
    ('buildrequests', (SELECT count(*) FROM buildrequests)),
    ('  pending (complete=0)', (SELECT count(*) FROM buildrequests WHERE complete = 0)),
    ('buildrequest_claims', (SELECT count(*) FROM buildrequest_claims)), ('builds', (SELECT count(*) FROM builds)),
    ('steps', (SELECT count(*) FROM steps)), ('logs', (SELECT count(*) FROM logs)),
    ('logchunks', (SELECT count(*) FROM logchunks)), ('build_properties', (SELECT count(*) FROM build_properties))
  ) v(t, n)"
echo "ids for the benchmarks:"
q -At -c "SELECT 'newest build (has steps and properties): ' || max(id) FROM builds
          UNION ALL SELECT 'huge log id: ' || id || ' (' || num_lines || ' lines)' FROM logs WHERE slug = 'huge'"
printf 'generation %.1f s, VACUUM ANALYZE %.1f s, total %.1f s\n' \
  "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" "$(echo "$t2 - $t0" | bc)"
