// The one way a test starts a Flotilla API (issue 29 §5). Two variants, for two reasons:
//
// - apiInProcess: buildApp, as services/api/service.ts calls it, inside the test's own process,
//   reached through Fastify's inject (no port, no socket). The request path is the real one
//   and a request costs microseconds, so this is the default: every endpoint, the query
//   engine, auth, the cache, the in-process fuzzer. The in-process files share vitest
//   processes (docs/testing.md), so the app must be stopped (stop()) when the file ends.
//   listenOn puts such an app on a free loopback port, for what needs a socket in process
//   (websockets, a client that hangs up mid-answer, limits Node's parser enforces).
// - apiProcess: services/api/main.ts as `npm run api` runs it (the suite's build of it:
//   helpers/service-build.ts), on free loopback ports, ready once /readyz answers 200. For
//   what only a process shows: its environment and configuration file read at start, exit
//   codes, signals, ports taken, resident memory, a crash, bytes on a real socket; and the
//   API of an end-to-end cluster (test/e2e/cluster.ts).
//
// Both take the database (and Redis) the test chose, so a test's data stays its own;
// helpers/databases.ts makes a fresh database from a template.
//
// Built on these: ApiUnderTest (test/api/lib/harness.ts), AuthApp (test/api/auth/lib.ts),
// ReviewStack (test/api/lib/review-stack.ts), startApiProcess (test/api/lib/api-process.ts).
// Not an API: test/api/events/lib.ts (the events plugin), test/api/hooks/lib.ts (the change
// hooks) and test/web/static.test.ts (the web UI's files) each mount one plugin alone on a
// bare Fastify, to test that plugin without the rest of the app in front of it.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { type AppDeps, buildApp } from '../../services/api/http/server.js';
import type { ConnectionPool } from '../../services/core/db/pool.js';
import { createRedis, type Redis } from '../../services/core/redis.js';
import { createLogger } from '../../services/core/telemetry/logger.js';
import { testEnv } from './env.js';
import { freePort, type Running, type StartOptions, startService, status } from './processes.js';
import { waitFor } from './wait.js';

/** The public URL an in-process API is told it has (nothing listens there). */
export const IN_PROCESS_PUBLIC_URL = 'http://flotilla.test:8010/';

export interface InProcessApiOptions extends Partial<Omit<AppDeps, 'db' | 'redis'>> {
  /**
   * The database the API serves: a pool, and the URL it was opened with, from which its reads
   * get connections of their own (AppDeps.databaseUrl); without one, reads share the pool.
   */
  db: { pool: ConnectionPool; url?: string };
  /**
   * Redis: a connection the caller owns (left open by stop()), or the URL of one the harness
   * opens and closes (default: the suite's Redis, TEST_REDIS_URL).
   */
  redis?: Redis | string;
  /** What the pod adds before the app is ready (the change hooks, as service.ts registers them). */
  beforeReady?: (app: FastifyInstance, redis: Redis) => Promise<void> | void;
}

export interface InProcessApi {
  app: FastifyInstance;
  /** The API's Redis connection (its event publisher is this connection's). */
  redis: Redis;
  /** Closes the app, and the Redis connection if the harness opened it; the database stays. */
  stop(): Promise<void>;
}

/** buildApp in this process, ready to inject into: a silent log, no force schedulers unless given. */
export async function apiInProcess(opts: InProcessApiOptions): Promise<InProcessApi> {
  const { db, redis: given = testEnv().redisUrl, beforeReady, ...deps } = opts;
  const ownRedis = typeof given === 'string';
  const redis = ownRedis ? createRedis(given, 'flotilla-api-test') : given;
  if (ownRedis) redis.on('error', () => {});
  try {
    const app = await buildApp({
      log: createLogger('test', 'silent'),
      publicUrl: IN_PROCESS_PUBLIC_URL,
      databaseUrl: db.url,
      ...deps,
      db: db.pool,
      redis,
    });
    try {
      await beforeReady?.(app, redis);
      await app.ready();
    } catch (err) {
      await app.close();
      throw err;
    }
    return {
      app,
      redis,
      async stop() {
        await app.close();
        if (ownRedis) redis.disconnect();
      },
    };
  } catch (err) {
    if (ownRedis) redis.disconnect();
    throw err;
  }
}

/** The in-process app listening on a free loopback port: its origin (http://127.0.0.1:PORT). */
export async function listenOn(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
}

export interface ApiProcessOptions {
  databaseUrl: string;
  /**
   * Default: the suite's Redis (TEST_REDIS_URL); null: no REDIS_URL, for an `env` that names
   * a Sentinel deployment instead (REDIS_SENTINELS: the API refuses both).
   */
  redisUrl?: string | null;
  /** MASTER_CONFIG: the path of a master configuration (absent: none, as an API may run). */
  config?: string;
  /** The public port (default: a free one); the probe port is always a free one of its own. */
  port?: number;
  /** More of its environment; wins over the harness's (LOG_LEVEL, PUBLIC_URL, PROBE_PORT...). */
  env?: Record<string, string>;
  /** Wait until /readyz answers 200 (default); false: return at once, for a test of a start that fails. */
  ready?: boolean;
  /** How long it may take to get ready (default: waitFor's for a process). */
  readyMs?: number;
  spawn?: StartOptions;
}

export interface ApiProcess {
  /** http://127.0.0.1:PORT */
  origin: string;
  /** http://127.0.0.1:PORT/api/v2 */
  base: string;
  port: number;
  /** The probe port: /metrics and the readiness details. */
  probePort: number;
  /** http://127.0.0.1:PROBE_PORT */
  probes: string;
  /** The environment it was started with (to start another like it: restart()). */
  env: Record<string, string>;
  proc: Running;
  pid: number;
  /** Peak resident set size so far (VmHWM), in KiB. */
  peakRssKiB(): number;
  /** SIGTERM, then SIGKILL of the same pid if it has not exited after a minute. */
  stop(): Promise<number | string>;
}

/** services/api/main.ts as a process on 127.0.0.1, ready (unless ready: false), stopped by its pid. */
export async function apiProcess(opts: ApiProcessOptions): Promise<ApiProcess> {
  const [port, probePort] = [opts.port ?? (await freePort()), await freePort()];
  const origin = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    DATABASE_URL: opts.databaseUrl,
    ...(opts.redisUrl === null ? {} : { REDIS_URL: opts.redisUrl ?? testEnv().redisUrl }),
    HOST: '127.0.0.1',
    PORT: String(port),
    PROBE_PORT: String(probePort),
    PUBLIC_URL: `${origin}/`,
    LOG_LEVEL: 'warn',
    ...(opts.config ? { MASTER_CONFIG: opts.config } : {}),
    ...opts.env,
  };
  return startApiWith(env, opts);
}

/** The same API again, as it was started (a rolling update's new pod on the old one's ports). */
export function restartApiProcess(api: ApiProcess, readyMs?: number): Promise<ApiProcess> {
  return startApiWith(api.env, { readyMs });
}

async function startApiWith(
  env: Record<string, string>,
  opts: Pick<ApiProcessOptions, 'ready' | 'readyMs' | 'spawn'>,
): Promise<ApiProcess> {
  const port = Number(env.PORT);
  const origin = `http://127.0.0.1:${port}`;
  const proc = startService('api', env, opts.spawn);
  const api: ApiProcess = {
    origin,
    base: `${origin}/api/v2`,
    port,
    probePort: Number(env.PROBE_PORT),
    probes: `http://127.0.0.1:${env.PROBE_PORT}`,
    env,
    proc,
    pid: proc.pid,
    peakRssKiB: () => statusField(proc.pid, 'VmHWM'),
    stop: () => proc.stop('SIGTERM', 60_000),
  };
  if (opts.ready === false) return api;
  try {
    await waitFor('api /readyz', async () => (await status(`${origin}/readyz`)) === 200, {
      proc,
      ...(opts.readyMs ? { timeoutMs: opts.readyMs } : {}),
    });
  } catch (err) {
    await proc.stop('SIGKILL');
    throw err;
  }
  return api;
}

function statusField(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  if (!line) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(/(\d+)\s*kB/.exec(line)![1]);
}
