#!/usr/bin/env bash
# The suite on a loaded machine: `npm test`, RUNS times in a row (default 5), with HOGS
# CPU-heavy processes beside it all along (default 2): `stress-ng --cpu 1` each (Debian's
# stress-ng, installed when missing), or a busy shell loop where it cannot be had. Every hog
# is started here and stopped by its pid, whatever the outcome. Each run's output goes to
# .data/under-load/run-<n>.log; a line per run says whether it passed and how long it took.
# Exits non-zero if any run failed.
#
#   deploy/local/test-under-load.sh                  # five runs beside two busy cores
#   RUNS=1 HOGS=1 deploy/local/test-under-load.sh    # one run beside one busy core
#   deploy/local/test-under-load.sh -- test/e2e      # arguments after -- go to npm test
set -euo pipefail
source "$(dirname "$0")/lib.sh"

RUNS="${RUNS:-5}"
HOGS="${HOGS:-2}"
[ "${1:-}" = "--" ] && shift
OUT="$ROOT/.data/under-load"
mkdir -p "$OUT"

if ! command -v stress-ng >/dev/null; then
  log "installing stress-ng from Debian's packages"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends stress-ng >/dev/null 2>&1 ||
    { as_root apt-get update -qq >/dev/null 2>&1 &&
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends stress-ng >/dev/null 2>&1; } ||
    log "no stress-ng: busy loops instead"
fi

hogs=()
stop_hogs() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${hogs[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop_hogs EXIT INT TERM
for _ in $(seq 1 "$HOGS"); do
  if command -v stress-ng >/dev/null; then
    stress-ng --cpu 1 --quiet &
  else
    bash -c 'while :; do :; done' &
  fi
  hogs+=($!)
done
log "$HOGS CPU hog(s) running (pids ${hogs[*]:-none}); load average $(cut -d' ' -f1-3 /proc/loadavg)"

failed=0
for n in $(seq 1 "$RUNS"); do
  start=$(date +%s)
  if (cd "$ROOT" && npm test -- "$@") >"$OUT/run-$n.log" 2>&1; then result=passed; else result=FAILED; failed=$((failed + 1)); fi
  took=$(($(date +%s) - start))
  log "run $n of $RUNS: $result in ${took} s (load average $(cut -d' ' -f1-3 /proc/loadavg); .data/under-load/run-$n.log)"
done
log "$((RUNS - failed)) of $RUNS runs passed beside $HOGS CPU hog(s)"
[ "$failed" -eq 0 ]
