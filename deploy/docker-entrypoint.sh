#!/bin/sh
# The container's command: which Flotilla process to run.
set -e
case "${1:-api}" in
  api)     exec node /app/dist/services/api/main.js ;;
  master)  exec node /app/dist/services/master/main.js ;;
  worker)  exec node /app/dist/services/worker/main.js ;;
  migrate) exec node /app/dist/services/core/db/migrate-cli.js ;;
  *)       exec "$@" ;;
esac
