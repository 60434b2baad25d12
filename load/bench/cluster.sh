#!/usr/bin/env bash
# The benchmark PostgreSQL cluster, separate from the local stack's and the tests' so that
# a benchmark disturbs nothing else: state in .data/bench/pg, 127.0.0.1:$BENCH_PG_PORT
# (default 55440), login role flotilla/flotilla.
#
#   load/bench/cluster.sh up            start it (initdb on first use), print its URL
#   load/bench/cluster.sh db NAME       drop and recreate database NAME, migrate it, print its URL
#   load/bench/cluster.sh migrate NAME  apply the migrations it lacks to database NAME (keeps its data)
#   load/bench/cluster.sh url NAME      print the URL of database NAME
#   load/bench/cluster.sh src [REV]     print the folder of a snapshot of services/ at commit REV
#   load/bench/cluster.sh down          stop it (pg_ctl, through its postmaster.pid)
#
# `db` migrates with the migrations committed at FLOTILLA_REV (default HEAD), not with the
# working tree, which others may be editing; `run.sh flotilla` serves the same commit. A
# snapshot is `git archive` of services/, package.json and tsconfig.json in
# .data/bench/src/<commit> (node_modules is found by walking up to the repository's).
#
# Settings (ALTER SYSTEM, postgresql.auto.conf): durability off (fsync, synchronous_commit,
# full_page_writes: the data is regenerated, never precious), shared_buffers 2GB so that
# both data sets stay in memory, jit off (compiling a plan costs more than the short
# queries measured here), larger WAL so that the generator does not checkpoint constantly.
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/deploy/local/lib.sh"

DIR="$ROOT/.data/bench/pg"
PORT="${BENCH_PG_PORT:-55440}"
psql_admin() { runuser -u postgres -- psql -h "$DIR" -p "$PORT" -U postgres -d postgres -qAt -v ON_ERROR_STOP=1 "$@"; }
url() { echo "postgresql://flotilla:flotilla@127.0.0.1:$PORT/$1"; }

up() {
  [ "$(id -u)" = 0 ] || die "run as root (the cluster runs as the postgres OS user)"
  ensure_system_packages
  pg_up "$DIR" "$PORT" fast
  if ! grep -q '^jit' "$DIR/postgresql.auto.conf" 2>/dev/null; then
    log "tuning the bench cluster (shared_buffers 2GB, jit off, WAL 8GB) and restarting it"
    for s in "shared_buffers='2GB'" "effective_cache_size='8GB'" "work_mem='16MB'" \
             "maintenance_work_mem='512MB'" "max_wal_size='8GB'" "checkpoint_timeout='30min'" \
             "jit=off" "fsync=off" "synchronous_commit=off" "full_page_writes=off"; do
      psql_admin -c "ALTER SYSTEM SET ${s%%=*} = ${s#*=}" >/dev/null
    done
    runuser -u postgres -- "$(pg_bin)/pg_ctl" -D "$DIR" -o "-p $PORT" -l "$DIR/postgres.log" -w -t 60 restart >/dev/null
  fi
}

src() {
  local rev dir
  rev="$(git -C "$ROOT" rev-parse --verify "${1:-${FLOTILLA_REV:-HEAD}}^{commit}")"
  dir="$ROOT/.data/bench/src/$rev"
  if [ ! -f "$dir/services/api/main.ts" ]; then
    mkdir -p "$dir"
    git -C "$ROOT" archive "$rev" services package.json tsconfig.json | tar -x -C "$dir"
  fi
  echo "$dir"
}

case "${1:-}" in
  up) up; url flotilla ;;
  src) src "${2:-}" ;;
  db)
    name="${2:?usage: cluster.sh db NAME}"
    [[ "$name" =~ ^[a-z_][a-z0-9_]*$ ]] || die "database names here are lowercase identifiers"
    up
    psql_admin -c "DROP DATABASE IF EXISTS $name WITH (FORCE)" >/dev/null
    psql_admin -c "CREATE DATABASE $name OWNER flotilla" >/dev/null
    dir="$(src)"
    log "migrating $name with the migrations of $(basename "$dir")"
    (cd "$ROOT" && DATABASE_URL="$(url "$name")" LOG_LEVEL=warn node --import tsx "$dir/services/core/db/migrate-cli.ts" >&2)
    url "$name"
    ;;
  migrate)
    name="${2:?usage: cluster.sh migrate NAME}"
    dir="$(src)"
    log "migrating $name with the migrations of $(basename "$dir")"
    (cd "$ROOT" && DATABASE_URL="$(url "$name")" LOG_LEVEL=warn node --import tsx "$dir/services/core/db/migrate-cli.ts" >&2)
    ;;
  url) url "${2:?usage: cluster.sh url NAME}" ;;
  down) pg_down "$DIR" ;;
  *) echo "usage: $0 up | db NAME | migrate NAME | url NAME | src [REV] | down" >&2; exit 2 ;;
esac
