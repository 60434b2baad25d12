#!/usr/bin/env bash
# Issue 35 §1 item 5: the reads at ten million builds, on a busy cluster, Flotilla and then
# Buildbot 3.7 on the same data (item 6 for reads).
#
#   load/bench/cluster.sh db fleet
#   SET=fleet STEPS=2000000 DETAIL=500000 load/generate/run.sh "$(load/bench/cluster.sh url fleet)" 1
#   load/fleet/reads.sh [flotilla|buildbot|both]         (default both)
#
# The set-up is the busy benchmark's (load/busy/run.sh: the API, a master and 20 agents as
# committed at HEAD, or Buildbot 3.7 and 20 buildbot-worker processes), on the database
# $FLEET_DB (default fleet) itself rather than a copy (BUSY_COPY=0: a second copy of the set
# would not fit the disk budget), and it calls this script back with the server's URL, which
# runs load/fleet/measure.ts: 20 builds kept running while the fleet_reads scenario runs.
# Results: load/results/fleet-reads-<target>.json.
#
# Environment: FLEET_DB, BUSY_PORT_BASE (27050: ports +0..+30), BENCH_PG_PORT, DURATION
# (60s), VUS (8).
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/deploy/local/lib.sh"
cd "$ROOT"

if [[ "${1:-}" == http* ]]; then
  # Called back by load/busy/run.sh (BUSY_MEASURE) once its cluster runs. Buildbot serves
  # on BUSY_PORT_BASE+5, Flotilla's API on +0.
  label=flotilla
  [[ "$1" == *":$((${BUSY_PORT_BASE:-27050} + 5))/"* ]] && label=buildbot
  exec node --import tsx load/fleet/measure.ts "$1" --label "$label" --out "load/results/fleet-reads-$label.json" \
    --duration "${DURATION:-60s}" --vus "${VUS:-8}"
fi
[ "$(id -u)" = 0 ] || die "run as root (PostgreSQL and Buildbot run as their own users)"
export BUSY_DB="${FLEET_DB:-fleet}" BUSY_COPY=0 BUSY_PORT_BASE="${BUSY_PORT_BASE:-27050}"
export BUSY_MEASURE="$ROOT/load/fleet/reads.sh"
exec load/busy/run.sh "${1:-both}"
