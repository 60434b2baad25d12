// One closed-loop HTTP load run with autocannon, keeping every response time so that any
// percentile (k6's p(95) included, which autocannon's histogram does not report) is exact.
import autocannon from 'autocannon';

export interface Run {
  /** responses received (any status) */
  responses: number;
  /** responses with a 2xx status */
  ok: number;
  /** non-2xx responses, connection errors and timeouts */
  failed: number;
  timeouts: number;
  seconds: number;
  rps: number;
  /** every response time in ms, sorted ascending (autocannon; wrk reports percentiles) */
  latencies: number[];
  /** p50 and p99 in ms, where the generator computed them itself (wrk) */
  p50?: number;
  p99?: number;
  statusCodes: Record<string, number>;
}

export interface RunOptions {
  /** the base URL: http://host:port/api/v2 */
  base: string;
  /** paths relative to base; each connection sends them in turn, over and over */
  paths: string[];
  connections: number;
  durationSeconds: number;
  timeoutSeconds: number;
  headers: Record<string, string>;
}

export async function hammer(opts: RunOptions): Promise<Run> {
  const url = new URL(opts.base);
  const prefix = url.pathname.replace(/\/$/, '');
  const latencies: number[] = [];
  const started = performance.now();
  const instance = autocannon({
    url: url.origin,
    connections: opts.connections,
    duration: opts.durationSeconds,
    timeout: opts.timeoutSeconds,
    headers: opts.headers,
    requests: opts.paths.map((p) => ({ method: 'GET', path: prefix + p })),
  });
  instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) =>
    latencies.push(ms),
  );
  const result = await instance;
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count]),
  );
  return {
    responses: latencies.length,
    ok: result['2xx'],
    failed: result.non2xx + result.errors,
    timeouts: result.timeouts,
    seconds,
    rps: latencies.length / seconds,
    latencies,
    statusCodes,
  };
}
