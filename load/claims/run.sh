#!/usr/bin/env bash
# The claim race at scale, on real processes: load/claims/run.ts against a PostgreSQL and a
# Redis of its own (started here on free loopback ports, state in .data/claims-<pid>, stopped
# by pid whatever the outcome), as npm test starts them.
#
#   load/claims/run.sh                      # 1,000 requests, 3 masters, 2 workers each
#   REQUESTS=300 MASTERS=2 load/claims/run.sh
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/deploy/local/lib.sh"
cd "$ROOT"
ensure_system_packages
ensure_node_modules

DATA="$ROOT/.data/claims-$$"
mkdir -p "$DATA"
PG_PORT="$(free_port)"
REDIS_PORT="$(free_port)"
cleanup() {
  local rc=$?
  redis_down "$DATA/redis"
  pg_down "$DATA/pg"
  rm -rf "$DATA"
  exit $rc
}
trap cleanup EXIT INT TERM
pg_up "$DATA/pg" "$PG_PORT" fast
redis_up "$DATA/redis" "$REDIS_PORT" fast
export TEST_DATABASE_URL="postgresql://flotilla:flotilla@127.0.0.1:$PG_PORT/flotilla"
export TEST_REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
node --import tsx load/claims/run.ts
