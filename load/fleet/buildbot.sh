#!/usr/bin/env bash
# Buildbot 3.7 on the fleet's queue (load/fleet/buildbot.ts) on the benchmark PostgreSQL
# cluster (load/bench/cluster.sh, 127.0.0.1:$BENCH_PG_PORT, a fresh database `fleet_buildbot`
# made by Flotilla's migrations, which are Buildbot 3.7's schema). Needs Debian's buildbot and
# buildbot-worker (deploy/local/lib.sh installs them: ensure_buildbot_master, ensure_buildbot_worker).
#
#   BENCH_PG_PORT=28440 load/fleet/buildbot.sh
#   PENDING=2500 BUILDERS=100 WORKERS=100 WORKER_STEPS=10,50 DRAIN_SECONDS=20 load/fleet/buildbot.sh   (small)
#
# load/fleet/run.sh --with-buildbot runs Flotilla's fleet and then this, for figures of one run.
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/deploy/local/lib.sh"
cd "$ROOT"
ensure_node_modules
ensure_buildbot_master
ensure_buildbot_worker
DATABASE_URL="$(load/bench/cluster.sh db fleet_buildbot)" node --import tsx load/fleet/buildbot.ts
