#!/usr/bin/env bash
# The busy-cluster benchmark (issue 20 §1): the web-UI mix of scenarios.json's `busy`, quiet
# and then while 20 builds run at once on real workers, against Flotilla and against Buildbot
# 3.7, each on its own copy of a generated database of the bench cluster.
#
#   load/busy/run.sh [flotilla|buildbot|both]        (default both)
#
# Sets up, for Flotilla: a copy of $BUSY_DB (default bench, from load/generate) named
# busy_flotilla, a Redis, the API, one master and 20 of Flotilla's agents (a build each), all
# as committed at HEAD (cluster.sh src), configured by load/busy/flotilla.yaml. For Buildbot:
# a copy named busy_buildbot, Buildbot 3.7 with load/busy/master.cfg (load/bench/buildbot.sh)
# and 20 buildbot-worker processes (Debian's package), as the oracle's user.
# Then load/busy/run.ts measures (load/results/busy-<target>.json), and everything started
# here is stopped by pid and the copies dropped.
#
# Environment: BUSY_DB, QUIET (30s), BUSY (60s), VUS (40), BUILDS (20), BENCH_PG_PORT (the
# bench cluster's, 55440), BUSY_MEASURE (a command run instead of run.ts on Flotilla's busy
# cluster, given the API's URL; load/bench/web/run.sh sets it; load/fleet/reads.sh sets it for
# both targets), BUSY_COPY (1; 0 runs on $BUSY_DB itself instead of a copy: the builds run
# stay in it, which a data set of 10M builds bears, and whose copy would not fit the disk
# budget of load/fleet/reads.sh), and the ports
# BUSY_PORT_BASE+0..30 (default 8050-8080) for the
# API, master, agents (+11..+30), Redis and Buildbot.
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/deploy/local/lib.sh"
cd "$ROOT"

[ "$(id -u)" = 0 ] || die "run as root (PostgreSQL and Buildbot run as their own users)"
WHAT="${1:-both}"
DB="${BUSY_DB:-bench}"
PG_PORT="${BENCH_PG_PORT:-55440}"
P="${BUSY_PORT_BASE:-8050}"
API_PORT=$P API_PROBE=$((P + 1)) MASTER_WORKERS=$((P + 2)) MASTER_PROBE=$((P + 3))
REDIS_PORT=$((P + 4)) BB_WWW=$((P + 5)) BB_PB=$((P + 6)) AGENT_PROBE=$((P + 10))
WORKERS=20
DATA="$ROOT/.data/busy"
BB_USER="${ORACLE_USER:-bboracle}"
MEASURE=(node --import tsx load/busy/run.ts --quiet "${QUIET:-30s}" --busy "${BUSY:-60s}"
  --vus "${VUS:-40}" --builds "${BUILDS:-20}" --workers "$WORKERS")

psql_admin() { runuser -u postgres -- psql -h "$ROOT/.data/bench/pg" -p "$PG_PORT" -U postgres -d postgres -qAt -v ON_ERROR_STOP=1 "$@"; }
copy_db() {
  [ "${BUSY_COPY:-1}" = 0 ] && return
  psql_admin -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" >/dev/null
  psql_admin -c "CREATE DATABASE $1 TEMPLATE $DB OWNER flotilla" >/dev/null
}
# The database a target runs on: its copy, or $DB itself with BUSY_COPY=0.
db_for() { if [ "${BUSY_COPY:-1}" = 0 ]; then echo "$DB"; else echo "$1"; fi; }
drop_db() { [ "${BUSY_COPY:-1}" = 0 ] && return; psql_admin -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" >/dev/null || true; }

PIDS=()
BB_WORKER_DIRS=()
cleanup() {
  local rc=$?
  # throwaway processes with builds running: a master would wait for its builds on SIGTERM
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  PIDS=()
  for d in "${BB_WORKER_DIRS[@]}"; do stop_pid buildbot-worker "$(cat "$d/twistd.pid" 2>/dev/null)"; done
  BB_WORKER_DIRS=()
  if [ -n "${BB_STARTED:-}" ]; then load/bench/buildbot.sh stop || true; BB_STARTED=""; fi
  redis_down "$DATA/redis"
  drop_db busy_flotilla
  drop_db busy_buildbot
  return $rc
}
trap cleanup EXIT

flotilla() {
  [ "${BUSY_COPY:-1}" = 0 ] && log "Flotilla: on $DB itself" || log "Flotilla: copying $DB to busy_flotilla"
  copy_db busy_flotilla
  local src url env
  src="$(load/bench/cluster.sh src)"
  url="$(load/bench/cluster.sh url "$(db_for busy_flotilla)")"
  redis_up "$DATA/redis" "$REDIS_PORT" fast
  mkdir -p "$DATA/flotilla"
  printf 'busy\n' >"$DATA/flotilla/password"
  chmod 600 "$DATA/flotilla/password"
  env=(DATABASE_URL="$url" REDIS_URL="redis://127.0.0.1:$REDIS_PORT" MASTER_CONFIG="$ROOT/load/busy/flotilla.yaml"
    LOG_LEVEL=warn OTEL_TRACES_EXPORTER=none OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none)
  log "Flotilla $(basename "$src" | cut -c1-7): API on 127.0.0.1:$API_PORT, a master, $WORKERS agents"
  env "${env[@]}" PORT="$API_PORT" PROBE_PORT="$API_PROBE" PUBLIC_URL="http://127.0.0.1:$API_PORT/" \
    node --import tsx "$src/services/api/main.ts" >"$DATA/flotilla/api.log" 2>&1 &
  PIDS+=($!)
  env "${env[@]}" MASTER_NAME=busy WORKER_PORT="$MASTER_WORKERS" PROBE_PORT="$MASTER_PROBE" \
    node --import tsx "$src/services/master/main.ts" >"$DATA/flotilla/master.log" 2>&1 &
  PIDS+=($!)
  wait_http "http://127.0.0.1:$API_PORT/readyz" 120 "${PIDS[0]}" || die "the API did not start ($DATA/flotilla/api.log)"
  wait_http "http://127.0.0.1:$MASTER_PROBE/readyz" 120 "${PIDS[1]}" || die "the master did not start ($DATA/flotilla/master.log)"
  for i in $(seq 1 $WORKERS); do
    MASTER_URL="ws://127.0.0.1:$MASTER_WORKERS/worker" WORKER_NAME="busy$i" \
      WORKER_PASSWORD_FILE="$DATA/flotilla/password" WORKER_DIR="$DATA/flotilla/busy$i" \
      PROBE_PORT=$((AGENT_PROBE + i)) LOG_LEVEL=warn \
      node --import tsx "$src/services/worker/main.ts" >"$DATA/flotilla/busy$i.log" 2>&1 &
    PIDS+=($!)
  done
  if [ -n "${BUSY_MEASURE:-}" ]; then
    # Another measure on the same busy cluster (load/bench/web/run.sh: every UI page in Chromium).
    "$BUSY_MEASURE" "http://127.0.0.1:$API_PORT/"
  else
    "${MEASURE[@]}" --base "http://127.0.0.1:$API_PORT/api/v2" --label flotilla \
      --metrics "http://127.0.0.1:$API_PROBE/metrics"
  fi
  cleanup
}

buildbot() {
  ensure_buildbot_master
  ensure_buildbot_worker
  [ "${BUSY_COPY:-1}" = 0 ] && log "Buildbot: on $DB itself" || log "Buildbot: copying $DB to busy_buildbot"
  copy_db busy_buildbot
  BB_STARTED=1
  BENCH_PG_PORT="$PG_PORT" BENCH_BB_CFG="$ROOT/load/busy/master.cfg" BENCH_BB_PORT="$BB_WWW" BENCH_BB_PB_PORT="$BB_PB" \
    load/bench/buildbot.sh start "$(db_for busy_buildbot)"
  mkdir -p "$DATA/buildbot"
  chown "$BB_USER:" "$DATA/buildbot"
  local p="$DATA"; while [ "$p" != / ]; do chmod o+x "$p" 2>/dev/null || true; p="$(dirname "$p")"; done
  for i in $(seq 1 $WORKERS); do
    local d="$DATA/buildbot/busy$i"
    rm -rf "$d"
    BB_WORKER_DIRS+=("$d")
    runuser -u "$BB_USER" -- env -i PATH="$PATH" HOME="$DATA/buildbot" LANG=C.UTF-8 \
      buildbot-worker create-worker --umask=0o022 "$d" "127.0.0.1:$BB_PB" "busy$i" busy >/dev/null
    runuser -u "$BB_USER" -- env -i PATH="$PATH" HOME="$DATA/buildbot" LANG=C.UTF-8 \
      buildbot-worker start "$d" >/dev/null
  done
  if [ -n "${BUSY_MEASURE:-}" ]; then
    "$BUSY_MEASURE" "http://127.0.0.1:$BB_WWW/"
  else
    "${MEASURE[@]}" --base "http://127.0.0.1:$BB_WWW/api/v2" --label buildbot
  fi
  cleanup
}

load/bench/cluster.sh up >/dev/null
case "$WHAT" in
  flotilla) flotilla ;;
  buildbot) buildbot ;;
  both) flotilla; buildbot ;;
  *) echo "usage: $0 [flotilla|buildbot|both]" >&2; exit 2 ;;
esac
