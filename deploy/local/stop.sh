#!/usr/bin/env bash
# npm stop: stop what npm start started, each by the pid it recorded.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
DATA="${FLOTILLA_DATA:-$ROOT/.data/local}"
for name in worker master api reports; do
  f="$DATA/run/$name.pid"
  [ -f "$f" ] || continue
  stop_pid "$name" "$(cat "$f")"
  rm -f "$f"
  log "$name stopped"
done
redis_down "$DATA/redis" && log "redis stopped"
pg_down "$DATA/pg" && log "postgres stopped"
