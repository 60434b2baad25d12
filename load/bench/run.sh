#!/usr/bin/env bash
# The issue's benchmark, one target at a time, on a database of the bench cluster:
#
#   load/bench/run.sh pgbench  [DB]   best SQL, by pgbench (load/bench/pgbench.ts)
#   load/bench/run.sh buildbot [DB]   a real Buildbot 3.7 serving DB (load/bench/buildbot.sh)
#   load/bench/run.sh flotilla [DB]   Flotilla's API (services/api/main.ts) serving DB
#
# DB defaults to "bench" (SCALE=1); "bench_small" is the 10k-row variant. Make them with
#   load/bench/cluster.sh db bench && load/generate/run.sh "$(load/bench/cluster.sh url bench)" 1
# Env: DURATION (s per run, default 10), CONNECTIONS (default 1,8), ONLY (endpoint names,
# comma-separated), TIMEOUT (s, default 60), PORT (Flotilla's, default 8040), PAGE_CACHE
# (on; off: Flotilla's results then go to flotilla-nocache-<DB>; checked: every kept page
# checked with the database, no write notices, to flotilla-checked-<DB>), FLOTILLA_REV
# (the commit whose API is measured, default HEAD; the database must carry exactly its
# migrations), PLAN_CACHE (auto; generic: the API's connections run with PostgreSQL's
# plan_cache_mode=force_generic_plan, results to <label>-generic-<DB>; see load/results/reads.md),
# ENGINE (the HTTP load generator: wrk, Debian's package, installed when missing; or
# autocannon, which the figures before 2026-11-24 were taken with).
# Writes load/results/<target>-<DB>.json and .md (the markdown table, also printed); with
# ONLY, <target>-<DB>.<names>.json and .md, which report.ts lays over the full run's.
# Every server it starts (API, Redis, Buildbot) it stops by pid, whatever the outcome; the
# bench PostgreSQL cluster stays up (load/bench/cluster.sh down).
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/deploy/local/lib.sh"
cd "$ROOT"

target="${1:-}"
db="${2:-bench}"
DURATION="${DURATION:-10}"
CONNECTIONS="${CONNECTIONS:-1,8}"
TIMEOUT="${TIMEOUT:-60}"
OUT="$ROOT/load/results"
mkdir -p "$OUT"
url="$(load/bench/cluster.sh url "$db")"
load/bench/cluster.sh up >/dev/null
[ "$(psql -X -At -c "SELECT count(*) > 0 FROM builds" "$url" 2>/dev/null)" = t ] ||
  die "database $db has no data: load/bench/cluster.sh db $db && load/generate/run.sh \"$url\" SCALE"
# a partial run (ONLY) gets files of its own, which report.ts lays over the full run's
only=(); part=""
[ -n "${ONLY:-}" ] && only=(--only "$ONLY") && part=".${ONLY//,/+}"

ENGINE="${ENGINE:-wrk}"
# Runs with autocannon are kept apart (label <target>-autocannon-<DB>): report.ts reads wrk's.
engine_label() { [ "$ENGINE" = autocannon ] && echo "${1%%-*}-autocannon-${1#*-}" || echo "$1"; }
http_bench() { # LABEL BASE PID
  set -- "$(engine_label "$1")" "$2" "$3"
  if [ "$ENGINE" = wrk ] && ! command -v wrk >/dev/null; then
    log "installing wrk from Debian's packages"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends wrk >/dev/null
  fi
  node --import tsx load/bench/http.ts --base "$2" --label "$1$part" --pid "$3" --duration "$DURATION" \
    --connections "$CONNECTIONS" --timeout "$TIMEOUT" --engine "$ENGINE" --out "$OUT/$1$part.json" "${only[@]}" |
    tee "$OUT/$1$part.md"
}

case "$target" in
  pgbench)
    psql -X -q -v ON_ERROR_STOP=1 -f load/bench/sql/counts.sql "$url" 2>/dev/null
    node --import tsx load/bench/pgbench.ts --db "$url" --label "pgbench-$db$part" --duration "$DURATION" \
      --connections "$CONNECTIONS" --out "$OUT/pgbench-$db$part.json" "${only[@]}" | tee "$OUT/pgbench-$db$part.md"
    ;;
  buildbot)
    trap 'load/bench/buildbot.sh stop' EXIT
    load/bench/buildbot.sh start "$db"
    http_bench "buildbot-$db" "http://127.0.0.1:${BENCH_BB_PORT:-8030}/api/v2" "$(load/bench/buildbot.sh pid)"
    ;;
  flotilla)
    port="${PORT:-8040}"
    # PAGE_CACHE=off measures every request read and rendered afresh (label flotilla-nocache).
    api_yaml=api.yaml label=flotilla note=""
    [ "${PAGE_CACHE:-on}" = off ] && api_yaml=api-nocache.yaml label=flotilla-nocache note=", page cache off"
    # PAGE_CACHE=checked: kept pages checked against the database on every request (no notices).
    [ "${PAGE_CACHE:-on}" = checked ] && api_yaml=api-checked.yaml label=flotilla-checked note=", every kept page checked"
    # PLAN_CACHE=generic: prepared statements keep one generic plan instead of being planned
    # again on every execution.
    pgoptions="${PGOPTIONS:-}"
    if [ "${PLAN_CACHE:-auto}" = generic ]; then
      pgoptions="$pgoptions -c plan_cache_mode=force_generic_plan" label="$label-generic"
      note="$note, generic plans"
    fi
    redis_dir="$ROOT/.data/bench/redis"
    api_pid=""
    cleanup() { stop_pid api "$api_pid"; redis_down "$redis_dir"; }
    trap cleanup EXIT
    redis_up "$redis_dir" "${BENCH_REDIS_PORT:-56379}" fast
    # The API as committed at FLOTILLA_REV (default HEAD), not the working tree, which others
    # may be editing (cluster.sh src makes the snapshot).
    src="$(load/bench/cluster.sh src)"
    rev="$(basename "$src")"
    need="$(git ls-tree --name-only "$rev" services/core/db/migrations/ | sed -n 's#.*/\([0-9]\{4\}_[a-z0-9_]*\)\.sql$#\1#p' | sort)"
    have="$(psql -X -At -c "SELECT id FROM flotilla.migrations ORDER BY 1" "$url")"
    [ "$need" = "$have" ] || die "database $db has migrations [$(echo $have)] but $rev has [$(echo $need)]: recreate it (cluster.sh db $db) and regenerate"
    log "Flotilla API at $(git log -1 --format='%h %s' "$rev" | cut -c1-80)"
    DATABASE_URL="$url" REDIS_URL="redis://127.0.0.1:${BENCH_REDIS_PORT:-56379}" PORT="$port" \
      PUBLIC_URL="http://127.0.0.1:$port/" LOG_LEVEL="${LOG_LEVEL:-warn}" OTEL_TRACES_EXPORTER=none \
      MASTER_CONFIG="$ROOT/load/bench/$api_yaml" \
      OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none PGOPTIONS="$pgoptions" \
      node --import tsx "$src/services/api/main.ts" >"$ROOT/.data/bench/api.log" 2>&1 &
    api_pid=$!
    wait_http "http://127.0.0.1:$port/api/v2/builders" 60 "$api_pid" ||
      { tail -20 "$ROOT/.data/bench/api.log" >&2; die "the API did not answer on 127.0.0.1:$port"; }
    log "Flotilla API on $db: pid $api_pid, http://127.0.0.1:$port/api/v2"
    BENCH_NOTE="Flotilla API at commit $rev$note" http_bench "$label-$db" "http://127.0.0.1:$port/api/v2" "$api_pid"
    ;;
  *) echo "usage: $0 pgbench|buildbot|flotilla [DB]" >&2; exit 2 ;;
esac
