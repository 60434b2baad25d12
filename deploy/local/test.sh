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
PART_PIDS=()
cleanup() {
  local rc=$?
  # Interrupted while the checks or vitest still run: end them (a part's vitest stops its
  # test processes, which stop theirs by pid; tsc or biome ends by itself).
  if [ -n "$CHECKS_PID" ]; then kill "$CHECKS_PID" 2>/dev/null || true; fi
  for pid in "${PART_PIDS[@]}"; do pkill -TERM -P "$pid" 2>/dev/null || true; done
  for pid in "${PART_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  redis_down "$DATA/redis"
  pg_down "$DATA/pg"
  if [ -n "${FLOTILLA_TEST_SERVICES_BUILD:-}" ]; then rm -rf "$FLOTILLA_TEST_SERVICES_BUILD"; fi
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
# without it and 0.60 s with it (load/results/test-suite.md). In the run's own
# folder: every run, CI's first among them, starts as cold as any other.
export NODE_COMPILE_CACHE="$DATA/compile-cache"
# The tools' own entry points, not npx: npx starts npm to find them, 0.4-0.6 CPU s and up to
# 3 s before each (five times a run).
BIN="$ROOT/node_modules/.bin"
# A full run's two vitest processes (below): how many end-to-end files run at once, and how
# many processes run the in-process files. Three and two, not four and three: on the two
# cores the suite is bound by CPU, and seven test processes with their clusters cost more CPU
# for the same work (a file took 1.3-2.3 times its CPU alone). `.ci/run` on a fresh clone,
# /usr/bin/time -v: twelve runs at four and three (2026-11-29 18:16 to 2026-11-30 03:33) took
# 18:12-21:35 of wall and 1,538-1,819 CPU s of user and system time, one at three and two
# 17:04 and 1,414; back to back on one commit (2026-11-30 05:17-05:53), three and two 16:24 and
# 1,388, four and three 16:56 and 1,452. Most of the first gap was the machine's drift; the
# pair's 4% of CPU is what fewer processes save (load/results/test-suite.md).
E2E_WORKERS="${E2E_WORKERS:-3}"
UNIT_WORKERS="${UNIT_WORKERS:-2}"
cd "$ROOT"

# The web UI's bundle: the API processes the tests start serve it (and the build checks its
# size budget).
log "building the web UI"
# Runs in the same checkout would otherwise rebuild services/web/dist at once, and one would
# miss a file the other had just replaced.
flock "$ROOT/.data/web-build.lock" node --import tsx services/web/build.ts

checks() {
  log "lock file (npm ci --dry-run, npm $(npm --version 2>/dev/null) and $NPM10)"
  ensure_lock_in_sync
  log "typecheck"
  # TypeScript 7 (the native compiler), one thread: beside vitest the machine is busy anyway,
  # and its parallel checkers repeat work. The project at 04:20 UTC on 2026-11-28, back to
  # back: TypeScript 5.9 27.5 CPU s; 7.0 with its default checkers 10.3 CPU s, with
  # --singleThreaded 5.5 CPU s (load/results/test-suite.md).
  "$BIN/tsc" -p tsconfig.json --noEmit --singleThreaded
  "$BIN/tsc" -p services/web/tsconfig.json --singleThreaded
  log "lint"
  "$BIN/biome" check --error-on-warnings .
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
# One part of a full run: a vitest process of its own for some projects, its lines prefixed
# with the part's name, its JSON report in $TEST_REPORT_DIR/<part>.json when that is set.
part() {
  local name="$1" workers="$2"
  shift 2
  local report=()
  if [ -n "${TEST_REPORT_DIR:-}" ]; then
    report=(--reporter=default --reporter=json "--outputFile=$TEST_REPORT_DIR/$name.json")
  fi
  "$BIN/vitest" run --maxWorkers="$workers" "$@" "${report[@]}" 2>&1 | sed -u "s/^/$name | /"
}

vitest=0
if [ -n "${FOCUS:-}" ] || [ $# -gt 0 ]; then
  # Files or options asked for: one vitest, as asked.
  log "vitest"
  "$BIN/vitest" run "$@" || vitest=$?
else
  # The whole suite: the end-to-end files and the rest as two vitest processes side by side,
  # each with slots of its own. In one vitest they shared three slots in one queue, and the
  # end-to-end files, which wait on the processes they start more than they compute, held all
  # three for the first two thirds of the run while the in-process files, which compute,
  # waited behind them (load/results/test-suite.md). Two queues keep both kinds
  # running from the start. One vitest cannot do it: it shares its processes among a
  # project's files only while the next file in its one queue is of the same project.
  log "preparing the run (template databases, the services' build)"
  FLOTILLA_TEST_SERVICES_BUILD="$(node --import tsx test/prepare-run.ts)"
  export FLOTILLA_TEST_SERVICES_BUILD
  log "vitest: end-to-end files ($E2E_WORKERS at a time) beside the rest ($UNIT_WORKERS processes)"
  part e2e "$E2E_WORKERS" --project e2e &
  PART_PIDS+=($!)
  part unit "$UNIT_WORKERS" --project unit --project isolated &
  PART_PIDS+=($!)
  for pid in "${PART_PIDS[@]}"; do wait "$pid" || vitest=$?; done
  PART_PIDS=()
  rm -rf "$FLOTILLA_TEST_SERVICES_BUILD"
fi
if [ -n "${CHECKS_PID:-}" ]; then
  checked=0
  wait "$CHECKS_PID" || checked=$?
  CHECKS_PID=
  cat "$DATA/checks.log" >&2
  [ "$checked" = 0 ] || die "the lock file, typecheck or lint failed (above)"
fi
exit "$vitest"
