#!/usr/bin/env bash
# Logs from the object store against PostgreSQL (load/bench/object-store/run.ts) on the bench
# PostgreSQL (load/bench/cluster.sh, here on port 22440) and a Redis of its own (a free
# loopback port, or REDIS_PORT; state in .data/objstore-<pid>, stopped whatever the outcome).
#
#   load/bench/object-store/run.sh                 # 4+4 logs of 100,000 lines, 10 s a run, first reads
#   READS=repeat load/bench/object-store/run.sh    # line ranges asked again (kept spans)
#   LOGS=2 LINES=20000 DURATION=5 PAIRS=1 KINDS=contents load/bench/object-store/run.sh
#   load/bench/object-store/run.sh move-rss        # a master's RSS moving a 200 MiB artifact (move-rss.ts)
set -euo pipefail
source "$(cd "$(dirname "$0")/../../.." && pwd)/deploy/local/lib.sh"
cd "$ROOT"
ensure_system_packages
ensure_node_modules

export BENCH_PG_PORT="${BENCH_PG_PORT:-22440}"
load/bench/cluster.sh up >/dev/null
DATABASE_URL="$(load/bench/cluster.sh db objstore | tail -1)"
own_redis objstore "${REDIS_PORT:-$(free_port)}"
PG_PID="$(head -1 .data/bench/pg/postmaster.pid)" DATABASE_URL="$DATABASE_URL" node --import tsx "load/bench/object-store/${1:-run}.ts"
