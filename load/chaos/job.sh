#!/bin/sh
# The command every chaos build runs: LINES numbered lines ("line 1" ... "line LINES") in
# batches of BATCH, PAUSE seconds apart, so that the checker can tell an exact log from a
# lost or doubled line. Each execution also appends to RECORD, a file every worker shares:
#   start TOKEN BUILD PID TIME    when it starts
#   tick  TOKEN BUILD PID TIME    after every batch
#   end   TOKEN BUILD PID TIME    when it has printed everything
#   term  TOKEN BUILD PID TIME    when SIGTERM stops it
# TOKEN names the build request (a property set when it was forced), BUILD the build
# number, so two executions of one request are two BUILDs of one TOKEN; from the first to
# the last record of each, the checker finds any two that ran at the same moment. A
# SIGKILL leaves no term record: the last tick bounds when it stopped, from below.
# Lines are appended with O_APPEND and are far below PIPE_BUF: records never interleave.
set -u
token="$1" build="$2" lines="$3" batch="$4" pause="$5" record="$6"
stamp() { echo "$1 $token $build $$ $(date +%s.%N)" >>"$record"; }
trap 'stamp term; exit 143' TERM
stamp start
i=0
while [ "$i" -lt "$lines" ]; do
  next=$((i + batch))
  [ "$next" -gt "$lines" ] && next=$lines
  awk -v a=$((i + 1)) -v b="$next" 'BEGIN { for (n = a; n <= b; n++) print "line " n }'
  i=$next
  stamp tick
  [ "$i" -lt "$lines" ] && sleep "$pause"
done
stamp end
