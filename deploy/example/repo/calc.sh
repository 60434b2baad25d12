#!/bin/sh
# A tiny calculator: calc.sh add 2 3 -> 5
set -eu
op="$1"; a="$2"; b="$3"
case "$op" in
  add) echo $((a + b)) ;;
  mul) echo $((a * b)) ;;
  *) echo "unknown operation: $op" >&2; exit 2 ;;
esac
