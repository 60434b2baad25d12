#!/usr/bin/env bash
# A rolling restart of 2 API processes behind a local HAProxy under load, done as Kubernetes
# does it (maxSurge 1, maxUnavailable 0), counting failed requests:
#
#   load/rolling/run.sh            both modes below, one after the other
#   MODES=prestop load/rolling/run.sh
#
# Modes: `prestop` waits PRESTOP seconds (the chart's api.preStopSeconds) before SIGTERM;
# `none` sends SIGTERM at once, as the chart did before it had a preStop hook.
# Env: DURATION (s of load per mode, default 40), CONNECTIONS (wrk's, default 32),
# PRESTOP (s, default 5), LAG (ms the proxy takes to learn that an endpoint left, default
# 1000), PROXY_PORT (default 20180), SHOW_WRK=1 (print wrk's own report too).
# Installs haproxy and wrk from Debian's packages when missing. PostgreSQL and Redis run
# in .data/rolling (fast, throwaway); every process it starts it stops by pid.
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/deploy/local/lib.sh"
cd "$ROOT"

DATA="$ROOT/.data/rolling"
mkdir -p "$DATA"
for tool in haproxy:haproxy wrk:wrk; do
  command -v "${tool%%:*}" >/dev/null && continue
  log "installing ${tool#*:} from Debian's packages"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${tool#*:}" >/dev/null
done
ensure_node_modules
PG_PORT="$(free_port)"
REDIS_PORT="$(free_port)"
cleanup() {
  local rc=$?
  redis_down "$DATA/redis"
  pg_down "$DATA/pg"
  exit $rc
}
trap cleanup EXIT INT TERM
pg_up "$DATA/pg" "$PG_PORT" fast
redis_up "$DATA/redis" "$REDIS_PORT" fast
export DATABASE_URL="postgresql://flotilla:flotilla@127.0.0.1:$PG_PORT/flotilla"
export REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
node --import tsx services/core/db/migrate-cli.ts >/dev/null
node --import tsx load/rolling/rolling-restart.ts \
  --modes "${MODES:-none,prestop}" --duration "${DURATION:-40}" --connections "${CONNECTIONS:-32}" \
  --prestop "${PRESTOP:-5}" --lag "${LAG:-1000}" --proxy-port "${PROXY_PORT:-20180}" --dir "$DATA"
