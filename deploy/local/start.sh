#!/usr/bin/env bash
# npm start: the whole stack on this machine, with the example configuration.
# Installs what is missing (Debian's postgresql and redis-server, npm packages), starts
# PostgreSQL and Redis on 127.0.0.1 with their state in .data/local, migrates, then starts
# one API, one master and one worker in the background and prints the URL.
# Idempotent: what already runs is left alone. `npm stop` stops everything by pid.
# FLOTILLA_DATA moves the state folder (the tests start a whole stack beside yours).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

DATA="${FLOTILLA_DATA:-$ROOT/.data/local}"
REL="${DATA#"$ROOT"/}"
PG_PORT="${FLOTILLA_PG_PORT:-15432}"
REDIS_PORT="${FLOTILLA_REDIS_PORT:-16379}"
API_PORT="${PORT:-8080}"
MASTER_PROBE_PORT="${MASTER_PROBE_PORT:-8081}"
WORKER_PROBE_PORT="${WORKER_PROBE_PORT:-8082}"
API_PROBE_PORT="${API_PROBE_PORT:-8084}"
WORKER_PORT="${WORKER_PORT:-9990}"
REPORTS_PORT="${REPORTS_PORT:-8083}"

[ "$(id -u)" = 0 ] || command -v sudo >/dev/null || die "run as root (or with sudo available): it installs and starts servers"
ensure_system_packages
ensure_node_modules
mkdir -p "$DATA/run" "$DATA/logs"

pg_up "$DATA/pg" "$PG_PORT"
redis_up "$DATA/redis" "$REDIS_PORT"
cat >"$DATA/ports" <<PORTS
PG_PORT=$PG_PORT
REDIS_PORT=$REDIS_PORT
API_PORT=$API_PORT
PORTS

export DATABASE_URL="postgresql://flotilla:flotilla@127.0.0.1:$PG_PORT/flotilla"
export REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
export LOG_LEVEL="${LOG_LEVEL:-info}"
[ -s "$DATA/worker-password" ] || (umask 077; node -e 'console.log(require("crypto").randomBytes(18).toString("base64url"))' >"$DATA/worker-password")
LOCAL_WORKER_PASSWORD="$(cat "$DATA/worker-password")"

# The example's login (deploy/example/master.yaml): user admin, a generated password, its
# scrypt hash in the users file the API pods read (both private to this user).
[ -s "$DATA/admin-password" ] || (umask 077; node -e 'console.log(require("crypto").randomBytes(12).toString("base64url"))' >"$DATA/admin-password")
ADMIN_PASSWORD="$(cat "$DATA/admin-password")"
if [ ! -s "$DATA/users.yaml" ] || [ "$DATA/admin-password" -nt "$DATA/users.yaml" ]; then
  hash="$(cd "$ROOT" && printf '%s\n' "$ADMIN_PASSWORD" | node --import tsx services/core/auth/hash-password.ts)" ||
    die "could not hash the admin password"
  (umask 077; printf 'users:\n  - { username: admin, password_hash: "%s", full_name: Admin }\n' "$hash" >"$DATA/users.yaml")
fi

# The configuration the processes read: the user's own copy of the example, made once (with
# the ports chosen here written in) and never rewritten, so that edits to it survive
# (deploy/local/local-config.ts). What it says is printed at the end.
CONFIG="$DATA/master.yaml"
CONFIG_NOTES="$(node "$ROOT/deploy/local/local-config.ts" "$ROOT/deploy/example/master.yaml" "$CONFIG" "$DATA" \
  "$API_PORT" "$REPORTS_PORT")" || die "could not prepare $CONFIG"

# The example project the example builder clones and tests: a real git repository.
EXAMPLE_REPO="$DATA/example-repo"
if [ ! -d "$EXAMPLE_REPO/.git" ]; then
  log "creating the example git repository in ${EXAMPLE_REPO#$ROOT/}"
  mkdir -p "$EXAMPLE_REPO"
  cp -r "$ROOT/deploy/example/repo/." "$EXAMPLE_REPO/"
  (cd "$EXAMPLE_REPO" && git init -q -b main && git add -A &&
    git -c user.name=Flotilla -c user.email=flotilla@localhost commit -qm "The example project")
fi
export EXAMPLE_REPO

log "building the web UI"
(cd "$ROOT" && node --import tsx services/web/build.ts >/dev/null) || die "the web UI did not build"

log "migrating $DATABASE_URL"
(cd "$ROOT" && node --import tsx services/core/db/migrate-cli.ts >>"$DATA/logs/migrate.log" 2>&1) ||
  { tail -5 "$DATA/logs/migrate.log" >&2; die "migration failed (see $DATA/logs/migrate.log)"; }

# start_service NAME ENV...: node itself is the process whose pid we keep, so that
# `npm stop` signals the service and not a wrapper. `reports` is the example's report
# receiver (deploy/local/report-receiver.ts); every other name is a service.
start_service() {
  local name="$1"; shift
  local script="services/$name/main.ts"
  [ "$name" = reports ] && script="deploy/local/report-receiver.ts"
  if pid_alive "$(cat "$DATA/run/$name.pid" 2>/dev/null)"; then
    log "$name already running (pid $(cat "$DATA/run/$name.pid"))"
    return 0
  fi
  # Only what the service needs: a worker's builds see its environment, so nothing else
  # leaks. OpenTelemetry's OTEL_* variables pass through, so `OTEL_TRACES_EXPORTER=otlp npm
  # start` exports traces from every process.
  local otel=()
  while IFS= read -r var; do otel+=("$var=${!var}"); done < <(compgen -e | grep '^OTEL_' || true)
  (cd "$ROOT" && exec env -i PATH="$PATH" HOME="$HOME" LANG=C.UTF-8 TZ=UTC LOG_LEVEL="$LOG_LEVEL" "${otel[@]}" "$@" \
    node --import tsx "$script" >>"$DATA/logs/$name.log" 2>&1) &
  echo $! >"$DATA/run/$name.pid"
  log "$name started (pid $!, log $REL/logs/$name.log)"
}

start_service reports PORT="$REPORTS_PORT" REPORT_TOKEN=local-example REPORT_HMAC_SECRET=local-example
start_service api DATABASE_URL="$DATABASE_URL" REDIS_URL="$REDIS_URL" PORT="$API_PORT" PUBLIC_URL="http://127.0.0.1:$API_PORT/" \
  PROBE_PORT="$API_PROBE_PORT" MASTER_CONFIG="$CONFIG"
start_service master DATABASE_URL="$DATABASE_URL" REDIS_URL="$REDIS_URL" LOCAL_WORKER_PASSWORD="$LOCAL_WORKER_PASSWORD" \
  MASTER_CONFIG="$CONFIG" MASTER_NAME="local:$ROOT" \
  PROBE_PORT="$MASTER_PROBE_PORT" WORKER_PORT="$WORKER_PORT"
# The worker reads its password from a file, never from its environment (docs/security.md).
start_service worker WORKER_NAME=local-worker WORKER_PASSWORD_FILE="$DATA/worker-password" \
  MASTER_URL="ws://127.0.0.1:$WORKER_PORT/worker" PROBE_PORT="$WORKER_PROBE_PORT" WORKER_DIR="$DATA/worker" \
  EXAMPLE_REPO="$EXAMPLE_REPO"

for probe in "api http://127.0.0.1:$API_PORT/readyz" "master http://127.0.0.1:$MASTER_PROBE_PORT/readyz" \
             "worker http://127.0.0.1:$WORKER_PROBE_PORT/readyz" "reports http://127.0.0.1:$REPORTS_PORT/builds"; do
  set -- $probe
  # A process still alive is waited for long: on a busy machine (a test suite beside it) the
  # API, started through tsx, took over 40 s to answer (2026-11-29); one that dies ends the
  # wait at once.
  log "waiting for $1 to be ready"
  wait_http "$2" 180 "$(cat "$DATA/run/$1.pid")" ||
    { tail -5 "$DATA/logs/$1.log" >&2; die "$1 did not become ready (see $REL/logs/$1.log)"; }
done
log "ready"
echo "Flotilla is up: open http://127.0.0.1:$API_PORT/ (the REST API is at http://127.0.0.1:$API_PORT/api/v2)"
echo "Reads are open to everyone; to force, stop or rebuild, log in as admin with password $ADMIN_PASSWORD"
echo "(kept in $REL/admin-password)."
echo "Build the example project (clones ${EXAMPLE_REPO#$ROOT/} and runs its tests):"
# -b as well as -c: the jar keeps the device cookie of the first login, and a later one that
# brings it is counted on its own, not with other clients' wrong passwords at 127.0.0.1
# (services/api/auth/login-throttle.ts).
echo "  curl -s -b .data/cookies -c .data/cookies -u admin:$ADMIN_PASSWORD -o /dev/null http://127.0.0.1:$API_PORT/auth/login"
echo "  curl -s -b .data/cookies -H 'Content-Type: application/json' -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"force\",\"params\":{\"username\":\"You <you@example.com>\"}}' http://127.0.0.1:$API_PORT/api/v2/forceschedulers/force-example"
echo "  curl -s 'http://127.0.0.1:$API_PORT/api/v2/builders/example/builds?order=-number&limit=1'"
echo "Or commit to ${EXAMPLE_REPO#$ROOT/}: the master polls it and builds each new commit on main."
# Scripts should not log in with a password (ten wrong ones lock the user's logins out).
echo "An API token for scripts: logged in, open http://127.0.0.1:$API_PORT/#/settings/tokens, or (after the login above):"
echo "  curl -s -b .data/cookies -H 'Content-Type: application/json' -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"create\",\"params\":{\"name\":\"my-script\",\"expires_at\":'\$((\$(date +%s)+30*86400))'}}' http://127.0.0.1:$API_PORT/api/v2/tokens"
echo "  then, with the token it answers (shown once): curl -s -H 'Authorization: Bearer flt_...' http://127.0.0.1:$API_PORT/api/v2/builders"
echo "What the example's reporters sent (each build's start and end; the GitHub statuses of the last commit):"
echo "  curl -s http://127.0.0.1:$REPORTS_PORT/builds"
echo "  curl -s http://127.0.0.1:$REPORTS_PORT/repos/flotilla/example/commits/\$(git -C ${EXAMPLE_REPO#$ROOT/} rev-parse HEAD)/statuses"
printf '%s\n' "$CONFIG_NOTES"
