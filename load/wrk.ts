// One closed-loop HTTP load run with wrk (Debian's package), the benchmark's default load
// generator since 2026-11-24 (load/results/reads.md): a C event loop, lighter on the two cores it
// shares with the server than autocannon (a Node process). Measured the same day on the same
// server (Flotilla's cached /builds/N?property=*): 14,096 req/s under wrk and 11,635 under
// autocannon at one connection, 49,666 and 53,995 at eight; a Node server answering a fixed
// string 15,483 and 14,345 at one.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Run, RunOptions } from './measure.js';

const run = promisify(execFile);
const REPORT = fileURLToPath(new URL('./bench/wrk-report.lua', import.meta.url));

interface Report {
  requests: number;
  duration_us: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50_us: number;
  p99_us: number;
}

export async function hammerWrk(opts: RunOptions): Promise<Run> {
  if (opts.paths.length !== 1) throw new Error('wrk runs one path at a time');
  // One thread per connection up to the two cores; wrk needs at least one connection a thread.
  const threads = Math.min(opts.connections, 2);
  const headers = Object.entries(opts.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  const { stdout } = await run(
    'wrk',
    [
      `-t${threads}`,
      `-c${opts.connections}`,
      `-d${opts.durationSeconds}s`,
      `--timeout`,
      `${opts.timeoutSeconds}s`,
      '-s',
      REPORT,
      ...headers,
      opts.base.replace(/\/$/, '') + opts.paths[0],
    ],
    { maxBuffer: 1 << 20, timeout: (opts.durationSeconds + opts.timeoutSeconds + 30) * 1000 },
  );
  const line = stdout.split('\n').find((l) => l.startsWith('{"requests"'));
  if (!line) throw new Error(`wrk printed no report:\n${stdout}`);
  const r = JSON.parse(line) as Report;
  const seconds = r.duration_us / 1e6;
  const failed = r.status + r.connect + r.read + r.write + r.timeout;
  return {
    responses: r.requests,
    ok: r.requests - r.status,
    failed,
    timeouts: r.timeout,
    seconds,
    rps: r.requests / seconds,
    latencies: [],
    p50: r.p50_us / 1000,
    p99: r.p99_us / 1000,
    statusCodes: r.status ? { 'non-2xx/3xx': r.status } : {},
  };
}
