#!/usr/bin/env bash
# A raw download of a log of SIZE_MB (default 1024) served in constant memory: adds a
# finished stdio log of that size to database DB of the bench cluster (chunks of 64 lines of
# 1,000 bytes, at Buildbot's 64 KiB chunk size, uncompressed as its raw mode stores them), starts the API on it
# (the commit at FLOTILLA_REV, default HEAD, as run.sh does), downloads it twice with curl,
# sampling the API's VmRSS every 20 ms, and prints bytes, seconds and peak RSS (sampled, and
# VmHWM, the kernel's high-water mark over the process's life). The log is removed again at
# the end, whatever the outcome, and every server it starts is stopped by its pid.
# ENCODINGS (default `identity`): the Accept-Encoding values to download it with, twice each,
# e.g. "identity gzip br zstd"; each download then also prints the bytes sent (compressed, as
# they crossed the wire: curl does not decode them), the raw text's rate and the API's CPU
# seconds (utime + stime from /proc) for it. CONTENT=build (default `z`: lines of 989 `z`s,
# which compress a hundredfold and more) writes each line as nine compiler messages instead
# (a counter, a source path of md5 hex shared by three in a row, a warning), which compress
# about as real build logs do rather than as a run of one letter.
#
#   load/bench/huge-log.sh [DB] [SIZE_MB]          e.g. load/bench/huge-log.sh bench_small 1024
#   ENCODINGS="identity gzip br zstd" CONTENT=build load/bench/huge-log.sh bench_small 64
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/deploy/local/lib.sh"
cd "$ROOT"

db="${1:-bench_small}"
size_mb="${2:-1024}"
url="$(load/bench/cluster.sh url "$db")"
port="${PORT:-8045}"
lines=$((size_mb * 1024 * 1024 / 1001))
logid=900000
encodings="${ENCODINGS:-identity}"
# One line of 1,000 bytes (its newline added by string_agg): the n-th line, as SQL over n.
case "${CONTENT:-z}" in
  z) line="'o' || lpad(n::text, 9, '0') || repeat('z', 989)" ;;
  build) line="left((SELECT string_agg(format('[%s] CC src/%s/%s.c -o obj/%s.o: warning: unused variable ''v%s'' [-Wunused-variable]',
                  lpad(m::text, 9), substr(h, 1, 6), substr(h, 7, 10), substr(h, 1, 6), m % 97), ' ' ORDER BY m)
                FROM generate_series(n * 9, n * 9 + 8) m, LATERAL (SELECT md5((m / 3)::text) AS h) d) || repeat(' ', 999), 999)" ;;
  *) die "CONTENT is z or build" ;;
esac

psql_q() { psql -X -q -v ON_ERROR_STOP=1 "$url" "$@"; }
api_pid=""
redis_dir="$ROOT/.data/bench/redis-huge"
cleanup() {
  stop_pid api "$api_pid"
  redis_down "$redis_dir"
  psql_q -c "DELETE FROM logchunks WHERE logid = $logid; DELETE FROM logs WHERE id = $logid" || true
}
trap cleanup EXIT

step="$(psql -X -At -c "SELECT max(id) FROM steps" "$url")"
log "adding log $logid: $lines lines of 1,000 bytes ($size_mb MiB) to step $step of $db"
t0=$(date +%s)
psql_q -c "DELETE FROM logchunks WHERE logid = $logid; DELETE FROM logs WHERE id = $logid" \
  -c "INSERT INTO logs (id, name, slug, stepid, complete, num_lines, type)
      VALUES ($logid, 'huge1g', 'huge1g', $step, 1, $lines, 's')" \
  -c "INSERT INTO logchunks (logid, first_line, last_line, content, compressed)
      SELECT $logid, c * 64, least(c * 64 + 63, $lines - 1),
             convert_to(string_agg($line, chr(10) ORDER BY n), 'UTF8'), 0
      FROM generate_series(0, $lines - 1) n, LATERAL (SELECT n / 64 AS c) k GROUP BY c"
log "log added in $(($(date +%s) - t0)) s"

redis_up "$redis_dir" "${BENCH_REDIS_PORT:-56380}" fast
src="$(load/bench/cluster.sh src)"
DATABASE_URL="$url" REDIS_URL="redis://127.0.0.1:${BENCH_REDIS_PORT:-56380}" PORT="$port" \
  PUBLIC_URL="http://127.0.0.1:$port/" LOG_LEVEL=warn OTEL_TRACES_EXPORTER=none \
  OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none MASTER_CONFIG="$ROOT/load/bench/api.yaml" \
  node --import tsx "$src/services/api/main.ts" >"$ROOT/.data/bench/api-huge.log" 2>&1 &
api_pid=$!
wait_http "http://127.0.0.1:$port/api/v2/builders" 60 "$api_pid" || die "the API did not start"
rss() { sed -n "s/^$1:\s*\([0-9]*\) kB/\1/p" "/proc/$api_pid/status"; }
log "API pid $api_pid idle: VmRSS $(($(rss VmRSS) / 1024)) MiB"
cpu() { awk '{print $14 + $15}' "/proc/$api_pid/stat"; }
ticks="$(getconf CLK_TCK)"
raw_bytes=""
for enc in $encodings; do
  for i in 1 2; do
    peak=0
    ( while kill -0 "$api_pid" 2>/dev/null; do rss VmRSS; sleep 0.02; done ) >"$ROOT/.data/bench/rss-huge" &
    sampler=$!
    cpu0="$(cpu)"
    out="$(curl -s -o /dev/null -H "Accept-Encoding: $enc" -w '%{http_code} %{size_download} %{time_total}' \
      "http://127.0.0.1:$port/api/v2/logs/$logid/raw")"
    cpu1="$(cpu)"
    kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
    peak="$(sort -n "$ROOT/.data/bench/rss-huge" | tail -1)"
    read -r code bytes secs <<<"$out"
    [ "$enc" = identity ] && raw_bytes="$bytes"
    rate="$(awk -v b="${raw_bytes:-0}" -v s="$secs" 'BEGIN { if (b > 0) printf "%.1f", b / s / 1048576; else print "?" }')"
    cpus="$(awk -v a="$cpu0" -v b="$cpu1" -v t="$ticks" 'BEGIN { printf "%.2f", (b - a) / t }')"
    echo "$enc download $i: status $code, $bytes bytes in $secs s ($rate MiB/s of raw text), API CPU $cpus s, peak VmRSS $((peak / 1024)) MiB, VmHWM $(($(rss VmHWM) / 1024)) MiB"
  done
done
