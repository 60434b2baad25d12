#!/usr/bin/env bash
# A real Buildbot 3.7 master serving a fresh copy of the recorded fixture, for the
# differential run (test/conformance/README.md). By hand, as root; not part of npm test.
#
#   test/conformance/differential/buildbot.sh start   load the fixture afresh, start it all
#   test/conformance/differential/buildbot.sh stop
#
# PostgreSQL in .data/differential/pg on 127.0.0.1:$DIFF_PG_PORT (default 55420), database
# "buildbot" owned by flotilla/flotilla; the master's REST API on 127.0.0.1:$DIFF_WWW_PORT
# (default 8020), PB on $DIFF_PB_PORT (default 9920); workers worker1 and worker2.
#
# The fixture's master row is "vm:/srv/oracle/run/master", and Buildbot names its master
# "<host name>:<basedir>" (a master of another name would be a second master, and the
# answers about masters would differ). So the master runs in private UTS and mount namespaces
# (unshare) where the host name is vm and its folder is mounted on /srv/oracle/run/master;
# nothing changes outside them. The workers report the same information as the recorded ones
# (it is part of the fixture). Every start loads the fixture afresh: control requests change
# the data. Everything comes from the repository: test/fixtures/buildbot-3.7/ (schema,
# fixture, master.cfg and the web plugin Buildbot needs before it serves REST).
set -euo pipefail
source "$(cd "$(dirname "$0")/../../.." && pwd)/deploy/local/lib.sh"

RECORDED="$ROOT/test/fixtures/buildbot-3.7"
DIR="$ROOT/.data/differential"
M="$DIR/master"
PG_PORT="${DIFF_PG_PORT:-55420}"
WWW_PORT="${DIFF_WWW_PORT:-8020}"
PB_PORT="${DIFF_PB_PORT:-9920}"
DB="postgresql://flotilla:flotilla@127.0.0.1:$PG_PORT/buildbot"
HOST=vm
BASEDIR=/srv/oracle/run/master

pid_of() { head -n1 "$1/twistd.pid" 2>/dev/null | tr -dc 0-9; }

stop_all() {
  local w
  for w in worker1 worker2; do stop_pid "$w" "$(pid_of "$DIR/workers/$w")"; done
  stop_pid "buildbot master" "$(pid_of "$M")"
  rm -f "$M/twistd.pid" "$DIR"/workers/*/twistd.pid
  pg_down "$DIR/pg"
}

start() {
  [ "$(id -u)" = 0 ] || die "run as root (namespaces, and PostgreSQL as the postgres user)"
  ensure_system_packages
  ensure_buildbot_master
  ensure_buildbot_worker
  stop_all
  mkdir -p "$DIR/workers"
  pg_up "$DIR/pg" "$PG_PORT" fast
  local admin="runuser -u postgres -- psql -h $DIR/pg -p $PG_PORT -U postgres -d postgres -qAt -v ON_ERROR_STOP=1"
  $admin -c "DROP DATABASE IF EXISTS buildbot WITH (FORCE)" -c "CREATE DATABASE buildbot OWNER flotilla" >/dev/null
  for f in schema.sql fixture.sql; do
    PGOPTIONS='-c client_min_messages=warning' psql -X -q -v ON_ERROR_STOP=1 -f "$RECORDED/$f" "$DB" >/dev/null
  done
  log "fixture loaded into $DB"

  # What `buildbot create-master` writes, on a throwaway sqlite URL so that no schema code
  # runs against the fixture (the configuration names the real database).
  rm -rf "$M" && mkdir -p "$M"
  buildbot create-master -r --db="sqlite:///$DIR/unused.sqlite" "$M" >"$DIR/create-master.log"
  cp "$RECORDED/master.cfg" "$M/master.cfg"
  [ -d /srv ] || mkdir /srv
  log "starting Buildbot 3.7 as $HOST:$BASEDIR (www 127.0.0.1:$WWW_PORT, pb 127.0.0.1:$PB_PORT)"
  unshare --mount --uts --propagation private bash -euc '
    hostname "$1"
    mount -t tmpfs -o mode=755 differential-srv /srv
    mkdir -p "$2"
    mount --bind "$3" "$2"
    shift 3
    exec "$@"' _ "$HOST" "$BASEDIR" "$M" \
    env -i PATH="$PATH" HOME="$DIR" LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC \
    PYTHONPATH="$RECORDED/www-plugin" ORACLE_DB_URL="postgresql+psycopg2://flotilla:flotilla@127.0.0.1:$PG_PORT/buildbot" \
    ORACLE_WWW_PORT="$WWW_PORT" ORACLE_PB_PORT="$PB_PORT" \
    buildbot start "$BASEDIR" >"$DIR/master-start.log" 2>&1 ||
    { tail -30 "$M/twistd.log" >&2; die "the master did not start"; }

  local i=0 w
  for w in worker1 worker2; do
    i=$((i + 1))
    rm -rf "$DIR/workers/$w"
    buildbot-worker create-worker --umask=0o022 "$DIR/workers/$w" "127.0.0.1:$PB_PORT" "$w" "pass$i" >/dev/null
    echo "oracle <oracle@example.invalid>" >"$DIR/workers/$w/info/admin"
    echo "Debian 12 loopback worker $w for the Buildbot API oracle" >"$DIR/workers/$w/info/host"
    env -i PATH="$PATH" HOME="$DIR" LANG=C.UTF-8 TZ=UTC buildbot-worker start "$DIR/workers/$w" >/dev/null ||
      { tail -20 "$DIR/workers/$w/twistd.log" >&2; die "$w did not start"; }
  done
  # Both workers connected, as in the fixture.
  node -e '
    const url = process.argv[1]; const end = Date.now() + 60_000;
    (async () => { for (;;) {
      try {
        const r = await fetch(url, { headers: { accept: "application/json" } });
        const n = (await r.json()).workers.filter((w) => w.connected_to.length > 0).length;
        if (n >= 2) process.exit(0);
      } catch {}
      if (Date.now() > end) process.exit(1); await new Promise((f) => setTimeout(f, 250));
    } })();' "http://127.0.0.1:$WWW_PORT/api/v2/workers" ||
    die "the workers did not connect (see $DIR/workers/*/twistd.log)"
  log "ready: http://127.0.0.1:$WWW_PORT/api/v2 on $DB"
}

case "${1:-}" in
  start) start ;;
  stop) stop_all; log "stopped" ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
