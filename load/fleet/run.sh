#!/usr/bin/env bash
# The fleet scenario (load/fleet/run.ts) on the benchmark PostgreSQL cluster
# (load/bench/cluster.sh, 127.0.0.1:$BENCH_PG_PORT, a fresh database `fleet_run`) and a Redis of
# its own (127.0.0.1:$FLEET_REDIS_PORT, deploy/local/lib.sh's own_redis).
#
#   BENCH_PG_PORT=28440 FLEET_REDIS_PORT=28441 load/fleet/run.sh
#   PENDING=2500 BUILDERS=100 WORKERS=100 DRAIN_SECONDS=20 load/fleet/run.sh    (a small run)
#   load/fleet/run.sh --with-buildbot    then Buildbot 3.7 on the same queue (load/fleet/buildbot.sh),
#                                        so that both sets of figures come from one run
#
# POSTGRES_OWN_CPU=1: the benchmark cluster's processes on CPU 0 (the backends it forks inherit
# it) and everything else of the run on the others (the masters, the APIs, Redis, the generated
# workers, pgbench's client): PostgreSQL on a core of its own, as the chart has it on a server
# of its own (charts/flotilla/values.yaml: the database is external), instead of six to thirty
# busy processes taking turns with its backends on two cores. Both sides of phase S's pairs are
# measured so (S_PGBENCH_SECONDS, pairs.ts): the limit is then PostgreSQL's on that one core.
# The cluster's CPUs are given back when the run ends.
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/deploy/local/lib.sh"
cd "$ROOT"
if [ "${POSTGRES_OWN_CPU:-}" = 1 ] && [ -z "${FLEET_PINNED:-}" ]; then
  cpus="$(nproc)"
  [ "$cpus" -ge 2 ] || die "POSTGRES_OWN_CPU=1 needs two CPUs or more (this machine has $cpus)"
  load/bench/cluster.sh up >/dev/null
  postmaster="$(head -1 .data/bench/pg/postmaster.pid)"
  pin_cluster() {
    local p
    for p in "$postmaster" $(pgrep -P "$postmaster"); do taskset -p -c "$1" "$p" >/dev/null || true; done
  }
  pin_cluster 0
  trap 'pin_cluster 0-$((cpus - 1))' EXIT
  others=1; [ "$cpus" -gt 2 ] && others="1-$((cpus - 1))"
  log "PostgreSQL on CPU 0, this run on CPU $others"
  FLEET_PINNED=1 taskset -c "$others" "$0" "$@"
  exit
fi
case "${POSTGRES_OWN_CPU:-}" in "" | 1) ;; *) die "POSTGRES_OWN_CPU: 1 or unset, not $POSTGRES_OWN_CPU" ;; esac
ensure_system_packages
ensure_node_modules
own_redis fleet "${FLEET_REDIS_PORT:-28441}"
# Its own database, fleet_run: `fleet` is the ten-million-build set of the reads (reads.sh),
# an hour to make, which `cluster.sh db` would drop.
DATABASE_URL="$(load/bench/cluster.sh db fleet_run)" node --import tsx load/fleet/run.ts
if [ "${1:-}" = --with-buildbot ]; then load/fleet/buildbot.sh; fi
