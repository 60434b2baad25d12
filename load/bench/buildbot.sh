#!/usr/bin/env bash
# A real Buildbot 3.7 master (Debian's `buildbot` package) serving a benchmark database,
# to measure it on exactly the data Flotilla is measured on.
#
#   load/bench/buildbot.sh start [DB]   DB defaults to "bench" (of load/bench/cluster.sh)
#   load/bench/buildbot.sh pid          the master's pid (twistd.pid)
#   load/bench/buildbot.sh stop
#
# It runs the configuration the recorded fixture came from (test/fixtures/buildbot-3.7/
# master.cfg: it reads its database URL and ports from ORACLE_DB_URL, ORACLE_WWW_PORT,
# ORACLE_PB_PORT) as the OS user bboracle, with test/fixtures/buildbot-3.7/www-plugin on
# PYTHONPATH (Debian ships no web UI, without which Buildbot serves no REST API), in its
# own basedir .data/bench/buildbot/master. Everything it needs is in the repository. REST: http://127.0.0.1:$BENCH_BB_PORT/api/v2
# (default 8030); PB on 127.0.0.1:$BENCH_BB_PB_PORT (default 9930). No worker is started,
# so it never claims the pending requests. BENCH_BB_CFG names another master.cfg that reads
# the same variables (load/busy/master.cfg, whose workers load/busy/run.sh starts).
#
# What it writes into the database at start (acceptable for a benchmark; regenerate for a
# pristine copy): a masters row for itself (active), builder_masters rows for builders 1-5
# (found by name_hash, so no new builder is created), builders_tags/tags, builder
# descriptions, schedulers, changesources and their *_masters rows, the configured
# workers' configured_workers rows, object_state (its session secret), and at stop the
# master row goes inactive. It reads and never rewrites the generated builds, requests,
# changes or logs. `buildbot create-master` gets a throwaway sqlite URL so that it
# never runs schema code against the benchmark database.
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/deploy/local/lib.sh"

RECORDED="$ROOT/test/fixtures/buildbot-3.7"
BB_USER="${ORACLE_USER:-bboracle}"
DIR="$ROOT/.data/bench/buildbot"
M="$DIR/master"
CFG="${BENCH_BB_CFG:-$RECORDED/master.cfg}"
PG_PORT="${BENCH_PG_PORT:-55440}"
WWW_PORT="${BENCH_BB_PORT:-8030}"
PB_PORT="${BENCH_BB_PB_PORT:-9930}"

as_bb() {
  runuser -u "$BB_USER" -- env -i PATH="$PATH" HOME="$DIR/home" LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC \
    PYTHONPATH="$RECORDED/www-plugin" ORACLE_DB_URL="$DB_URL" ORACLE_WWW_PORT="$WWW_PORT" \
    ORACLE_PB_PORT="$PB_PORT" "$@"
}
master_pid() { head -n1 "$M/twistd.pid" 2>/dev/null | tr -dc 0-9; }

start() {
  local db="${1:-bench}"
  [[ "$db" =~ ^[a-z_][a-z0-9_]*$ ]] || die "database names here are lowercase identifiers"
  DB_URL="postgresql+psycopg2://flotilla:flotilla@127.0.0.1:$PG_PORT/$db"
  [ "$(id -u)" = 0 ] || die "run as root (it runs Buildbot as the $BB_USER user)"
  [ -f "$CFG" ] || die "no master.cfg at $CFG (set BENCH_BB_CFG)"
  if ! command -v buildbot >/dev/null || ! dpkg-query -W -f='${Status}' python3-psycopg2 2>/dev/null | grep -q 'ok installed'; then
    log "installing Debian's buildbot and python3-psycopg2"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends buildbot python3-psycopg2 >/dev/null ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends buildbot python3-psycopg2 >/dev/null; }
  fi
  # a system user of its own: Buildbot need not run as root
  getent passwd "$BB_USER" >/dev/null ||
    useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$BB_USER"
  if pid_alive "$(master_pid)"; then die "a bench Buildbot already runs (pid $(master_pid)); stop it first"; fi
  mkdir -p "$M" "$DIR/home"
  chown "$BB_USER:" "$DIR" "$M" "$DIR/home"
  local p="$DIR"; while [ "$p" != / ]; do p="$(dirname "$p")"; chmod o+x "$p" 2>/dev/null || true; done
  if [ ! -f "$M/buildbot.tac" ]; then
    as_bb buildbot create-master -r --db="sqlite:///$DIR/home/unused.sqlite" "$M" >"$DIR/create-master.log"
  fi
  install -o "$BB_USER" -g "$BB_USER" -m 644 "$CFG" "$M/master.cfg"
  rm -f "$M/twistd.log"
  log "starting Buildbot 3.7 on $db (www 127.0.0.1:$WWW_PORT, pb 127.0.0.1:$PB_PORT)"
  as_bb buildbot start "$M" >"$DIR/start.log" 2>&1 || { tail -30 "$M/twistd.log" >&2; die "buildbot did not start"; }
  wait_http "http://127.0.0.1:$WWW_PORT/api/v2/builders" 120 "$(master_pid)" ||
    { tail -30 "$M/twistd.log" >&2; die "buildbot's REST API did not answer"; }
  log "ready: http://127.0.0.1:$WWW_PORT/api/v2 (pid $(master_pid))"
}

case "${1:-}" in
  start) start "${2:-bench}" ;;
  pid) master_pid ;;
  stop) stop_pid buildbot "$(master_pid)"; rm -f "$M/twistd.pid" ;;
  *) echo "usage: $0 start [DB] | pid | stop" >&2; exit 2 ;;
esac
