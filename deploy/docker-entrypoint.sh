#!/bin/sh
# The container's command: which Flotilla process to run, or the image's HEALTHCHECK.
# FLOTILLA_HOME is where the image keeps the compiled code (/app); tests set it to run the
# same layout outside a container.
set -e
app="${FLOTILLA_HOME:-/app}"
case "${1:-api}" in
  api)     exec node "$app/dist/services/api/main.js" ;;
  master)  exec node "$app/dist/services/master/main.js" ;;
  worker)  exec node "$app/dist/services/worker/main.js" ;;
  migrate) exec node "$app/dist/services/core/db/migrate-cli.js" ;;
  # An operator's commands on logins: `flotilla auth unblock <user|address>` (docs/security.md).
  auth)    shift; exec node "$app/dist/services/api/auth-cli.js" "$@" ;;
  # Alive when the process's probe answers: the master's and worker's PROBE_PORT, or the
  # API's PORT (the image sets both; only the running process's port answers).
  healthcheck)
    exec node -e '
      const ports = [process.env.PROBE_PORT, process.env.PORT].filter(Boolean);
      const alive = (p) => fetch(`http://127.0.0.1:${p}/healthz`, { signal: AbortSignal.timeout(4000) })
        .then((r) => { if (!r.ok) throw new Error(String(r.status)); });
      Promise.any(ports.map(alive)).then(() => process.exit(0), () => process.exit(1));' ;;
  *)       exec "$@" ;;
esac
