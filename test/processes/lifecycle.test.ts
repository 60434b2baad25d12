// Each process starts on its own the way its container does, serves /healthz and /readyz,
// is ready only while what it depends on answers, and stops cleanly on SIGTERM.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiProcess } from '../helpers/api.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { freePort, type Running, startRedis, startService, status } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

let db: TestDatabase;
let redis: Awaited<ReturnType<typeof startRedis>>;
const running: Running[] = [];

beforeAll(async () => {
  db = await createDatabase('migrated');
  redis = await startRedis();
});
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop('SIGKILL')));
  await redis?.proc.stop('SIGKILL');
  await db?.drop();
});

describe('api', () => {
  it('is live, ready only while PostgreSQL and Redis answer, and stops on SIGTERM', async () => {
    const started = await apiProcess({
      databaseUrl: db.url,
      redisUrl: redis.url,
      env: { LOG_LEVEL: 'info' },
    });
    const api = started.proc;
    running.push(api);
    const [base, probe] = [started.origin, started.probePort];
    expect(await status(`${base}/healthz`)).toBe(200);
    // The public port says ready or not, no more; the probe port says why, and has /metrics.
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'ready' });
    const ready = await (await fetch(`http://127.0.0.1:${probe}/readyz`)).json();
    expect(ready).toEqual({ ready: true, checks: { postgres: 'ok', schema: 'ok', redis: 'ok' } });
    expect(await status(`http://127.0.0.1:${probe}/metrics`)).toBe(200);
    expect(await status(`${base}/metrics`)).toBe(404);

    // Redis goes away: not ready (but still alive); it comes back: ready again.
    await redis.proc.stop('SIGKILL');
    await waitFor('api not ready', async () => (await status(`${base}/readyz`)) === 503, { proc: api });
    expect(await status(`${base}/healthz`)).toBe(200);
    redis = await startRedis(redis.port);
    await waitFor('api ready again', async () => (await status(`${base}/readyz`)) === 200, { proc: api });

    // Logs are JSON lines from pino.
    const first = api
      .output()
      .split('\n')
      .find((l) => l.includes('api listening'));
    expect(JSON.parse(first!)).toMatchObject({ level: 30, service: 'api', msg: 'api listening' });

    expect(await api.stop('SIGTERM')).toBe(0);
    expect(api.output()).toMatch(/"msg":"stopped"/);
  });
});

describe('master and worker', () => {
  it('the worker connects with its password, both are ready, both stop on SIGTERM', async () => {
    const [probe, workerPort, workerProbe] = [await freePort(), await freePort(), await freePort()];
    const master = startService('master', {
      DATABASE_URL: db.url,
      REDIS_URL: redis.url,
      MASTER_CONFIG: 'deploy/example/master.yaml',
      MASTER_NAME: 'test-master',
      PROBE_PORT: String(probe),
      WORKER_PORT: String(workerPort),
      LOCAL_WORKER_PASSWORD: 'right',
    });
    running.push(master);
    await waitFor('master ready', async () => (await status(`http://127.0.0.1:${probe}/readyz`)) === 200, {
      proc: master,
    });

    const worker = startService(
      'worker',
      {
        MASTER_URL: `ws://127.0.0.1:${workerPort}/worker`,
        WORKER_NAME: 'local-worker',
        PROBE_PORT: String(workerProbe),
      },
      { input: 'right\n' },
    );
    running.push(worker);
    await waitFor(
      'worker ready',
      async () => (await status(`http://127.0.0.1:${workerProbe}/readyz`)) === 200,
      { proc: worker },
    );
    // The master's log line may reach its stdout after the worker reports itself ready.
    await waitFor('the master to log the connection', async () =>
      /"worker":"local-worker".*"msg":"worker connected"/.test(master.output()),
    );

    expect(await worker.stop('SIGTERM')).toBe(0);
    expect(await master.stop('SIGTERM')).toBe(0);
  });

  it('a worker with the wrong password is refused and never ready', async () => {
    const [probe, workerPort, workerProbe] = [await freePort(), await freePort(), await freePort()];
    const master = startService('master', {
      DATABASE_URL: db.url,
      REDIS_URL: redis.url,
      MASTER_CONFIG: 'deploy/example/master.yaml',
      PROBE_PORT: String(probe),
      WORKER_PORT: String(workerPort),
      LOCAL_WORKER_PASSWORD: 'right',
    });
    running.push(master);
    await waitFor('master ready', async () => (await status(`http://127.0.0.1:${probe}/readyz`)) === 200, {
      proc: master,
    });
    const worker = startService(
      'worker',
      {
        MASTER_URL: `ws://127.0.0.1:${workerPort}/worker`,
        WORKER_NAME: 'local-worker',
        PROBE_PORT: String(workerProbe),
      },
      { input: 'wrong\n' },
    );
    running.push(worker);
    await waitFor('refusal', async () => worker.output().includes('master refused our credentials'), {
      proc: worker,
    });
    expect(await status(`http://127.0.0.1:${workerProbe}/readyz`)).toBe(503);
    // The master's log line may reach its stdout after the worker has heard the refusal.
    await waitFor('the master to log the refusal', async () =>
      /worker refused: bad credentials/.test(master.output()),
    );
    expect(await worker.stop()).toBe(0);
    expect(await master.stop()).toBe(0);
  });

  it('a master with a bad configuration says what is wrong and exits 2', async () => {
    const master = startService('master', {
      DATABASE_URL: db.url,
      REDIS_URL: redis.url,
      MASTER_CONFIG: 'package.json',
      PROBE_PORT: String(await freePort()),
    });
    running.push(master);
    expect(await master.exited).toBe(2);
    expect(master.output()).toMatch(/package.json is invalid/);
  });
});
