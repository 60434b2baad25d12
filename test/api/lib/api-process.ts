// The API as a real process (services/api/main.ts, what `npm run api`
// runs) on a database of the test's own, ready once /readyz says so, stopped by its pid.
import { readFileSync } from 'node:fs';
import { testEnv } from '../../helpers/env.js';
import { freePort, type Running, startService, status } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/wait.js';
import { ORACLE_MASTER_YAML } from './harness.js';

export interface ApiProcess {
  /** http://127.0.0.1:PORT/api/v2 */
  base: string;
  /** http://127.0.0.1:PROBE_PORT (/readyz with the details, /metrics). */
  probes: string;
  pid: number;
  proc: Running;
  /** Peak resident set size so far (VmHWM), in KiB. */
  peakRssKiB(): number;
  stop(): Promise<number | string>;
}

export interface ApiProcessOptions {
  /** MASTER_CONFIG; absent: the oracle's configuration. */
  masterConfig?: string;
  /** LOG_LEVEL; absent: silent. */
  logLevel?: string;
}

export async function startApiProcess(
  databaseUrl: string,
  opts: ApiProcessOptions = {},
): Promise<ApiProcess> {
  const [port, probePort] = [await freePort(), await freePort()];
  const origin = `http://127.0.0.1:${port}`;
  const proc = startService('api', {
    DATABASE_URL: databaseUrl,
    REDIS_URL: testEnv().redisUrl,
    PORT: String(port),
    PROBE_PORT: String(probePort),
    HOST: '127.0.0.1',
    PUBLIC_URL: `${origin}/`,
    MASTER_CONFIG: opts.masterConfig ?? ORACLE_MASTER_YAML,
    LOG_LEVEL: opts.logLevel ?? 'silent',
  });
  try {
    await waitFor('api /readyz', async () => (await status(`${origin}/readyz`)) === 200, { proc });
  } catch (err) {
    await proc.stop('SIGKILL');
    throw err;
  }
  return {
    base: `${origin}/api/v2`,
    probes: `http://127.0.0.1:${probePort}`,
    pid: proc.pid,
    proc,
    peakRssKiB: () => statusField(proc.pid, 'VmHWM'),
    // SIGTERM, then SIGKILL of the same pid if it has not exited after a minute.
    stop: () => proc.stop('SIGTERM', 60_000),
  };
}

function statusField(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  if (!line) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(/(\d+)\s*kB/.exec(line)![1]);
}
