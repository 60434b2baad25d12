#!/bin/sh
# The example project's tests: each line is one test case.
set -u
failures=0
check() {
  got=$(sh ./calc.sh "$1" "$2" "$3" 2>&1)
  if [ "$got" = "$4" ]; then echo "ok   $1 $2 $3 = $4"; else echo "FAIL $1 $2 $3: expected $4, got $got"; failures=$((failures + 1)); fi
}
check add 2 3 5
check add -1 1 0
check mul 6 7 42
check mul 0 9 0
echo "$failures failure(s)"
exit $failures
