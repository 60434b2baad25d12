#!/usr/bin/env bash
# npm test: typecheck, lint and every vitest suite against a real PostgreSQL and Redis that
# this script starts on free loopback ports (the same functions as npm start, a separate
# data folder), then stops by pid, whatever the outcome.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || command -v sudo >/dev/null || die "run as root (or with sudo available)"
ensure_system_packages
ensure_buildbot_worker
ensure_browser
ensure_buildbot_master
ensure_node_modules
log "scripts run on Node $(node --version) (node_modules/.bin/node; the system has $(/usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin node --version 2>/dev/null || echo none))"

# Each run has its own folder, so that runs side by side never touch each other's servers.
DATA="$ROOT/.data/test-$$"
mkdir -p "$DATA"
PG_PORT="$(free_port)"
REDIS_PORT="$(free_port)"

CHECKS_PID=
cleanup() {
  local rc=$?
  # Interrupted while the checks still run: end them (their tsc or biome ends by itself).
  if [ -n "$CHECKS_PID" ]; then kill "$CHECKS_PID" 2>/dev/null || true; fi
  redis_down "$DATA/redis"
  pg_down "$DATA/pg"
  rm -rf "$DATA"
  exit $rc
}
trap cleanup EXIT INT TERM

log "starting PostgreSQL on 127.0.0.1:$PG_PORT and Redis on 127.0.0.1:$REDIS_PORT (state in ${DATA#$ROOT/})"
pg_up "$DATA/pg" "$PG_PORT" fast
redis_up "$DATA/redis" "$REDIS_PORT" fast

export TEST_DATABASE_URL="postgresql://flotilla:flotilla@127.0.0.1:$PG_PORT/flotilla"
export TEST_REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
# The replica tests (test/helpers/pg-replica.ts) copy the cluster with pg_basebackup as the
# postgres OS user, through the cluster's own socket folder (local connections are trusted).
export TEST_PG_SOCKET_DIR="$DATA/pg"
export LOG_LEVEL="${LOG_LEVEL:-silent}"
# V8's compiled code for every module a Node process of this run loads, kept on disk for the
# next process that loads it: the suite starts some 200 API, master, worker and test
# processes, which load the same modules each time. A master's imports took 0.70 CPU s
# without it and 0.60 s with it (load/RESULTS.md §10, fourth sitting). In the run's own
# folder: every run, CI's first among them, starts as cold as any other.
export NODE_COMPILE_CACHE="$DATA/compile-cache"
cd "$ROOT"

# The web UI's bundle: the API processes the tests start serve it (and the build checks its
# size budget).
log "building the web UI"
node --import tsx services/web/build.ts

checks() {
  log "lock file (npm ci --dry-run, npm $(npm --version 2>/dev/null) and $NPM10)"
  ensure_lock_in_sync
  log "typecheck"
  npx tsc -p tsconfig.json --noEmit
  npx tsc -p services/web/tsconfig.json
  log "lint"
  npx biome check --error-on-warnings .
  log "lock file, typecheck and lint passed"
}

# FOCUS=1 npm test -- test/x: only the named vitest files (a quick loop while working).
# Otherwise the checks run beside vitest, not before it: they are one process at a time for
# about 25 s, while vitest spends most of its first minutes waiting on the processes its
# tests start. Their output is shown once vitest ends, and either failing fails the run.
if [ -z "${FOCUS:-}" ]; then
  checks >"$DATA/checks.log" 2>&1 &
  CHECKS_PID=$!
fi
log "vitest"
vitest=0
npx vitest run "$@" || vitest=$?
if [ -n "${CHECKS_PID:-}" ]; then
  checked=0
  wait "$CHECKS_PID" || checked=$?
  CHECKS_PID=
  cat "$DATA/checks.log" >&2
  [ "$checked" = 0 ] || die "the lock file, typecheck or lint failed (above)"
fi
exit "$vitest"
