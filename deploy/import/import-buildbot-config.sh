#!/bin/sh
# Runs the importer with a Python that has Buildbot: $BUILDBOT_PYTHON if set, else the first of
# python3 and /usr/bin/python3 (Debian's, where its buildbot package installs) that imports it.
# A virtualenv's python3 comes first on PATH where the master runs from one.
here=$(dirname "$0")
if [ -z "$BUILDBOT_PYTHON" ]; then
  for p in python3 /usr/bin/python3; do
    if "$p" -c 'import buildbot' 2>/dev/null; then BUILDBOT_PYTHON=$p; break; fi
  done
fi
if [ -z "$BUILDBOT_PYTHON" ]; then
  echo "error: no python3 with Buildbot installed here: set BUILDBOT_PYTHON" >&2
  exit 2
fi
exec "$BUILDBOT_PYTHON" "$here/buildbot_to_flotilla.py" "$@"
