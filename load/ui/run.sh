#!/usr/bin/env bash
# The web UI's benchmark: the home page and the log viewer in Debian's Chromium, timed by
# the browser's own clocks, against Flotilla's API on the 1M-row benchmark database.
#
#   load/bench/cluster.sh db bench && load/generate/run.sh "$(load/bench/cluster.sh url bench)" 1
#   load/ui/run.sh [DB]          # DB: bench (default) or bench_small
#
# Environment: RUNS (page loads per measure, default 10), PORT (the API's, default 8041),
# BENCH_PG_PORT, BENCH_REDIS_PORT (as load/bench), FLOTILLA_REV (the API and UI measured,
# default HEAD: a snapshot, so edits in the work tree do not leak in), PAGE_CACHE (on, the
# default; off: every API read afresh, load/bench/api-nocache.yaml). Prints a markdown
# table and writes load/results/ui-<DB>[-nocache].json.
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/deploy/local/lib.sh"
cd "$ROOT"

db="${1:-bench}"
port="${PORT:-8041}"
api_yaml=api.yaml label="ui-$db"
[ "${PAGE_CACHE:-on}" = off ] && api_yaml=api-nocache.yaml label="ui-$db-nocache"
url="$(load/bench/cluster.sh url "$db")"
ensure_browser
src="$(load/bench/cluster.sh src)"
rev="$(basename "$src")"
node --import tsx "$src/services/web/build.ts" >&2
redis_dir="$ROOT/.data/bench/redis-ui"
api_pid=""
cleanup() { stop_pid api "$api_pid"; redis_down "$redis_dir"; }
trap cleanup EXIT
redis_up "$redis_dir" "${BENCH_REDIS_PORT:-56380}" fast
DATABASE_URL="$url" REDIS_URL="redis://127.0.0.1:${BENCH_REDIS_PORT:-56380}" PORT="$port" \
  PUBLIC_URL="http://127.0.0.1:$port/" LOG_LEVEL="${LOG_LEVEL:-warn}" MASTER_CONFIG="$ROOT/load/bench/$api_yaml" \
  OTEL_TRACES_EXPORTER=none OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
  node --import tsx "$src/services/api/main.ts" >"$ROOT/.data/bench/api-ui.log" 2>&1 &
api_pid=$!
wait_http "http://127.0.0.1:$port/readyz" 60 "$api_pid" ||
  { tail -20 "$ROOT/.data/bench/api-ui.log" >&2; die "the API did not answer on 127.0.0.1:$port"; }
log "Flotilla API and UI at $(git log -1 --format='%h %s' "$rev" | cut -c1-80) on $db"
mkdir -p load/results
node --import tsx load/ui/measure.ts "http://127.0.0.1:$port/" "${RUNS:-10}" "load/results/$label.json" \
  "Flotilla at $rev, database $db, page cache ${PAGE_CACHE:-on}"
