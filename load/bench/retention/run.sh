#!/usr/bin/env bash
# Retention under load (load/bench/retention/run.ts) on the bench PostgreSQL (load/bench/cluster.sh,
# tuned and separate from the tests') and a Redis of its own (a free loopback port, state in
# .data/retention-<pid>, stopped by pid whatever the outcome).
#
#   load/bench/retention/run.sh                                   # 1,000,000 chunks, 100,000 builds, 20 running
#   CHUNKS=100000 BUILDS=10000 QUIET_SECONDS=15 load/bench/retention/run.sh
#   MODE=masters load/bench/retention/run.sh                      # the same through real masters (masters.ts)
set -euo pipefail
source "$(cd "$(dirname "$0")/../../.." && pwd)/deploy/local/lib.sh"
cd "$ROOT"
ensure_system_packages
ensure_node_modules

DATABASE_URL="$(load/bench/cluster.sh up | tail -1)"
own_redis retention "$(free_port)"
BENCH_PG_DIR="$ROOT/.data/bench/pg" DATABASE_URL="$DATABASE_URL" node --import tsx "load/bench/retention/$([ "${MODE:-}" = masters ] && echo masters || echo run).ts"
