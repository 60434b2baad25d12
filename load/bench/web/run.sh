#!/usr/bin/env bash
# Every page of Flotilla's web UI measured in Chromium (measure.ts beside this: requests,
# bytes, first render, CPU while 20 builds run), on the busy-cluster benchmark's set-up: a
# copy of the generated database, the API, one master and 20 agents as committed at HEAD
# (load/busy/run.sh flotilla, configuration load/busy/flotilla.yaml: builder and force
# scheduler `busy`), with the web UI built into that snapshot. Writes
# load/results/web-pages-flotilla-<DB>.json and prints the table.
#
#   load/bench/cluster.sh db bench && load/generate/run.sh "$(load/bench/cluster.sh url bench)" 1
#   load/bench/web/run.sh [DB]          # DB: bench (default) or bench_small
#
# Buildbot 3.7's UI is measured by the same script, given its URL, against a Buildbot
# started on its own copy of the database (load/bench/buildbot.sh, or any running one):
#   node --import tsx load/bench/web/measure.ts http://127.0.0.1:PORT/ --label buildbot
#
# Environment: as load/busy/run.sh's (BUSY_PORT_BASE, BENCH_PG_PORT), CPU_SECONDS (10),
# PAGES (a comma-separated list of the table's page names: only those; then the JSON is
# written beside the whole run's, -PAGES.json, not over it).
set -euo pipefail
source "$(cd "$(dirname "$0")/../../.." && pwd)/deploy/local/lib.sh"
cd "$ROOT"

if [[ "${1:-}" == http* ]]; then
  # Called back by load/busy/run.sh (BUSY_MEASURE) with the API's URL once its cluster runs.
  mkdir -p load/results
  exec node --import tsx load/bench/web/measure.ts "$1" --label "Flotilla $(git rev-parse --short HEAD), $WEB_DB" \
    --out "load/results/web-pages-flotilla-$WEB_DB${PAGES:+-${PAGES//,/-}}.json" --busy busy:busy --builds 20 \
    --cpu-seconds "${CPU_SECONDS:-10}" --pages "${PAGES:-}"
fi
[ "$(id -u)" = 0 ] || die "run as root (PostgreSQL runs as its own user)"
ensure_browser
load/bench/cluster.sh up >/dev/null
# The API serves the web UI built beside the code it runs: the snapshot's.
node --import tsx "$(load/bench/cluster.sh src)/services/web/build.ts" >&2
WEB_DB="${1:-bench}" BUSY_DB="${1:-bench}" BUSY_MEASURE="$ROOT/load/bench/web/run.sh" \
  exec load/busy/run.sh flotilla
