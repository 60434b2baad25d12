#!/usr/bin/env bash
# The fleet scenario (load/fleet/run.ts) on the benchmark PostgreSQL cluster
# (load/bench/cluster.sh, 127.0.0.1:$BENCH_PG_PORT, a fresh database `fleet_run`) and a Redis of
# its own (127.0.0.1:$FLEET_REDIS_PORT, deploy/local/lib.sh's own_redis).
#
#   BENCH_PG_PORT=28440 FLEET_REDIS_PORT=28441 load/fleet/run.sh
#   PENDING=2500 BUILDERS=100 WORKERS=100 DRAIN_SECONDS=20 load/fleet/run.sh    (a small run)
#   load/fleet/run.sh --with-buildbot    then Buildbot 3.7 on the same queue (load/fleet/buildbot.sh),
#                                        so that both sets of figures come from one run
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/deploy/local/lib.sh"
cd "$ROOT"
ensure_system_packages
ensure_node_modules
own_redis fleet "${FLEET_REDIS_PORT:-28441}"
# Its own database, fleet_run: `fleet` is the ten-million-build set of the reads (reads.sh),
# an hour to make, which `cluster.sh db` would drop.
DATABASE_URL="$(load/bench/cluster.sh db fleet_run)" node --import tsx load/fleet/run.ts
if [ "${1:-}" = --with-buildbot ]; then load/fleet/buildbot.sh; fi
