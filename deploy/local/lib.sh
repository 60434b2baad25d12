# Shared by start.sh, stop.sh and test.sh: install what is missing, and run PostgreSQL and
# Redis from Debian's packages on 127.0.0.1 with all their state in one folder.
# Every server is found again only through its own pid file.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export PATH="$ROOT/node_modules/.bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

log() { printf '[flotilla %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

pg_bin() {
  local d
  for d in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { echo "$d"; return 0; }
  done
  return 1
}

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

ensure_system_packages() {
  local need=()
  pg_bin >/dev/null || need+=(postgresql)
  command -v psql >/dev/null || need+=(postgresql-client)
  command -v redis-server >/dev/null || need+=(redis-server)
  # The failover tests run Redis Sentinel (Debian ships it as its own package).
  command -v redis-sentinel >/dev/null || need+=(redis-sentinel)
  command -v git >/dev/null || need+=(git)
  # The worker TLS tests make their own certificate authority.
  command -v openssl >/dev/null || need+=(openssl)
  # The chart tests lint its YAML as chart-testing (ct lint) does.
  command -v yamllint >/dev/null || need+=(yamllint)
  # promtool (in Debian's prometheus package) checks every process's /metrics exposition.
  command -v promtool >/dev/null || need+=(prometheus)
  # The pass secret provider's tests run Debian's pass with gpg (gnupg).
  command -v pass >/dev/null || need+=(pass)
  command -v gpg >/dev/null || need+=(gnupg)
  # The htpasswd login tests write their files with Apache's htpasswd.
  command -v htpasswd >/dev/null || need+=(apache2-utils)
  [ ${#need[@]} -eq 0 ] && return 0
  log "installing ${need[*]} from Debian's packages"
  # Debian's packages would start their own servers (on the default ports) as they install:
  # a policy-rc.d that refuses every start keeps them from it, as in Debian's own images.
  # Ours run elsewhere, started by these scripts.
  local policy=/usr/sbin/policy-rc.d added=""
  if [ ! -e "$policy" ]; then
    as_root sh -c "printf '#!/bin/sh\nexit 101\n' >$policy && chmod 755 $policy" && added=1
  fi
  local rc=0
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >/dev/null; then
    as_root apt-get update -qq >/dev/null
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >/dev/null || rc=$?
  fi
  [ -n "$added" ] && as_root rm -f "$policy"
  return $rc
}

# The browser tests (test/web) drive Debian's Chromium with playwright-core; nothing downloads
# a browser of its own.
ensure_browser() {
  [ -x /usr/bin/chromium ] && return 0
  log "installing chromium from Debian's packages"
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null; then
    as_root apt-get update -qq >/dev/null
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null
  fi
}

# The project's Node is a dev dependency (the npm registry's `node` package), so every npm
# script, and every process these scripts start, runs on it whatever the system's Node is:
# npm puts node_modules/.bin first on a script's PATH, and so does this file. The system's
# node and npm only bootstrap: they run `npm ci`, which fetches the project's Node.
project_node_version() { sed -n 's/^ *"node": "\([0-9][0-9.]*\)",\{0,1\}$/\1/p' "$ROOT/package.json"; }

# The tests that prove Buildbot's own workers run Flotilla's builds need Debian's
# buildbot-worker (3.7 on Debian 12); npm start does not.
ensure_buildbot_worker() {
  command -v buildbot-worker >/dev/null && return 0
  log "installing buildbot-worker from Debian's packages"
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends buildbot-worker >/dev/null; then
    as_root apt-get update -qq >/dev/null
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends buildbot-worker >/dev/null
  fi
}

# The test that proves a Buildbot 3.7 master on the same database still accepts our session
# cookies asks Buildbot's own session code (python3 -c 'import buildbot.www.service'), from
# Debian's buildbot package (3.7 on Debian 12); npm start does not need it.
# The master, for its session code and for the mixed cluster's Buildbot master, with its
# PostgreSQL driver (test/e2e/mixed-cluster.test.ts).
ensure_buildbot_master() {
  /usr/bin/python3 -c 'import buildbot.www.service, psycopg2' 2>/dev/null && return 0
  log "installing buildbot (the master) and python3-psycopg2 from Debian's packages"
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends buildbot python3-psycopg2 >/dev/null; then
    as_root apt-get update -qq >/dev/null
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends buildbot python3-psycopg2 >/dev/null
  fi
}

ensure_node_modules() {
  local want have
  want="$(project_node_version)"
  [ -n "$want" ] || die "package.json names no exact Node version in devDependencies"
  if [ ! -f "$ROOT/node_modules/.package-lock.json" ] || [ "$ROOT/package-lock.json" -nt "$ROOT/node_modules/.package-lock.json" ] ||
     [ "$("$ROOT/node_modules/.bin/node" -p process.versions.node 2>/dev/null)" != "$want" ]; then
    log "installing npm packages (npm ci, with Node $want)"
    # No fallback to `npm install`: a lock that npm ci refuses is a bug, and the test script
    # checks for it (ensure_lock_in_sync).
    (cd "$ROOT" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
  have="$(node -p process.versions.node 2>/dev/null)"
  [ "$have" = "$want" ] ||
    die "node on PATH is $(command -v node) (Node ${have:-?}), not the project's Node $want in node_modules/.bin: run npm ci"
}

# Fails unless `npm ci` accepts package-lock.json, on the npm running this script and on
# npm 10 (the npm of the oldest Node line still supported): a lock written by one npm
# without other platforms' optional packages is refused by another (npm/cli#4828).
NPM10="npm@10.9.9"
ensure_lock_in_sync() {
  local npm
  for npm in "" "$NPM10"; do
    local cmd=(npm ci --dry-run --ignore-scripts --no-audit --no-fund --loglevel=error)
    [ -n "$npm" ] && cmd=(npm exec --yes --package="$npm" -- "${cmd[@]}")
    (cd "$ROOT" && "${cmd[@]}" >/dev/null) ||
      die "npm ci${npm:+ (with $npm)} refuses package-lock.json: regenerate it with \`rm -rf node_modules && npm install\`"
  done
}

# A port for a server these scripts start (the suite's own PostgreSQL and Redis, load/'s
# clusters), drawn as the tests draw theirs: deploy/local/free-port.ts says how and why.
free_port() { node "$ROOT/deploy/local/free-port.ts"; }

pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

# pg_up DIR PORT [fast]: a PostgreSQL cluster in DIR owned by the postgres OS user, with a
# login role and database "flotilla" (password "flotilla"). "fast" turns off durability,
# for throwaway test clusters only.
pg_up() {
  local dir="$1" port="$2" mode="${3:-}" bin
  bin="$(pg_bin)" || die "PostgreSQL is not installed"
  id postgres >/dev/null 2>&1 || die "the postgres OS user is missing (is the postgresql package installed?)"
  mkdir -p "$dir"
  chown postgres:postgres "$dir"; chmod 700 "$dir"
  # the postgres user must be able to reach the folder
  local p="$dir"; while [ "$p" != / ]; do p="$(dirname "$p")"; chmod o+x "$p" 2>/dev/null || true; done
  if [ ! -f "$dir/PG_VERSION" ]; then
    runuser -u postgres -- "$bin/initdb" -D "$dir" -U postgres -E UTF8 --locale=C.UTF-8 \
      --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    cat >>"$dir/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
timezone = 'UTC'
log_timezone = 'UTC'
max_connections = 200
shared_buffers = 256MB
CONF
    if [ "$mode" = fast ]; then
      printf 'fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n' >>"$dir/postgresql.conf"
    fi
  fi
  if ! runuser -u postgres -- "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
    runuser -u postgres -- "$bin/pg_ctl" -D "$dir" -o "-p $port" -l "$dir/postgres.log" -w -t 60 start >/dev/null ||
      { tail -20 "$dir/postgres.log" >&2; die "PostgreSQL did not start"; }
  fi
  local q="runuser -u postgres -- psql -h $dir -p $port -U postgres -d postgres -qAt -v ON_ERROR_STOP=1"
  [ "$($q -c "select 1 from pg_roles where rolname='flotilla'")" = 1 ] ||
    $q -c "create role flotilla login createdb password 'flotilla'" >/dev/null
  [ "$($q -c "select 1 from pg_database where datname='flotilla'")" = 1 ] ||
    $q -c "create database flotilla owner flotilla" >/dev/null
}

pg_down() {
  local dir="$1" bin
  [ -f "$dir/postmaster.pid" ] || return 0
  bin="$(pg_bin)" && runuser -u postgres -- "$bin/pg_ctl" -D "$dir" -m fast -w -t 60 stop >/dev/null 2>&1 && return 0
  stop_pid postgres "$(head -n1 "$dir/postmaster.pid" 2>/dev/null)"
}

# redis_up DIR PORT [fast]: Redis on 127.0.0.1 with its pid file, log and data in DIR.
redis_up() {
  local dir="$1" port="$2" mode="${3:-}"
  mkdir -p "$dir"
  pid_alive "$(cat "$dir/redis.pid" 2>/dev/null)" && return 0
  local persist=(--appendonly yes --save "60 1000")
  [ "$mode" = fast ] && persist=(--appendonly no --save "")
  redis-server --port "$port" --bind 127.0.0.1 --protected-mode yes --daemonize yes \
    --dir "$dir" --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" "${persist[@]}" >/dev/null
  for _ in $(seq 1 50); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  tail -20 "$dir/redis.log" >&2; die "Redis did not start"
}

redis_down() {
  local dir="$1"
  [ -f "$dir/redis.pid" ] || return 0
  stop_pid redis "$(cat "$dir/redis.pid")"
  rm -f "$dir/redis.pid"
}

# stop_pid NAME PID: SIGTERM, up to 30 s, then SIGKILL of the same pid.
stop_pid() {
  local name="$1" pid="${2:-}"
  pid_alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 300); do pid_alive "$pid" || return 0; sleep 0.1; done
  log "$name ($pid) ignored SIGTERM; SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
}

# wait_http URL [SECONDS] [PID]: until URL answers 2xx; gives up at once if PID dies.
# (node's fetch: curl is not on every machine)
wait_http() {
  node -e '
    const [url, s, pid] = process.argv.slice(1); const end = Date.now() + 1000 * Number(s);
    const alive = () => { if (!pid) return true; try { process.kill(Number(pid), 0); return true; } catch { return false; } };
    (async () => { for (;;) {
      try { const r = await fetch(url); if (r.ok) process.exit(0); } catch {}
      if (Date.now() > end || !alive()) process.exit(1); await new Promise((f) => setTimeout(f, 100));
    } })();' "$1" "${2:-30}" "${3:-}"
}

# own_redis NAME PORT: a benchmark's throwaway Redis on 127.0.0.1:PORT, state in
# .data/NAME-<pid>, stopped by pid (and the folder removed) however the script exits; sets
# REDIS_URL. The set-up each load/*/run.sh repeated (load/fleet/run.sh uses it).
own_redis() {
  OWN_REDIS_DATA="$ROOT/.data/$1-$$"
  mkdir -p "$OWN_REDIS_DATA"
  trap 'rc=$?; redis_down "$OWN_REDIS_DATA/redis"; rm -rf "$OWN_REDIS_DATA"; exit $rc' EXIT INT TERM
  redis_up "$OWN_REDIS_DATA/redis" "$2" fast
  export REDIS_URL="redis://127.0.0.1:$2"
}
