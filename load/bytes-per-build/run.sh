#!/usr/bin/env bash
# Bytes per build at rest, Flotilla against Buildbot 3.7 on the same builds
# (load/bytes-per-build/run.ts), on the bench PostgreSQL (load/bench/cluster.sh: each master
# gets a fresh database there, dropped at the end). Run as root.
#
#   load/bytes-per-build/run.sh                   # 50 builds on each
#   BUILDS=20 KINDS=buildbot load/bytes-per-build/run.sh
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/deploy/local/lib.sh"
cd "$ROOT"
ensure_system_packages
ensure_node_modules
ensure_buildbot_master
ensure_buildbot_worker
DATABASE_URL="$(load/bench/cluster.sh up | tail -1)" node --import tsx load/bytes-per-build/run.ts
