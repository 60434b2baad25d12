// A master or an API pod busy on every connection of its pool is ready: /readyz asks
// PostgreSQL through a connection of its own (core/health.ts probeDatabase), so it says
// whether the database answers, not whether the pool has a connection free. And it answers
// 503 when PostgreSQL is really gone (cut under it by a proxy), then 200 again once it is back.
// Each process runs with a pool of one connection (DATABASE_POOL_SIZE), which the test makes
// wait on a lock of a table the process writes on its own, every few seconds.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { apiProcess } from '../helpers/api.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { masterYaml } from '../helpers/master-config.js';
import { type PgProxy, startPgProxy } from '../helpers/pg-proxy.js';
import { freePort, type Running, startRedis, startService, status } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

let db: TestDatabase;
let redis: Awaited<ReturnType<typeof startRedis>>;
let proxy: PgProxy;
let dir: string;
const running: Running[] = [];

beforeAll(async () => {
  [db, redis] = await Promise.all([createDatabase('migrated'), startRedis()]);
  proxy = await startPgProxy(db.url);
  dir = mkdtempSync(join(tmpdir(), 'readyz-busy-'));
});
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop('SIGKILL')));
  await proxy?.close();
  await redis?.proc.stop('SIGKILL');
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The pool's connections of the process (not its probe's), and whether each waits on a lock. */
const poolConnections = async (application: string) =>
  (await db.pool.query(sql`
    SELECT wait_event_type = 'Lock' AS waiting FROM pg_stat_activity
    WHERE datname = ${db.name} AND application_name = ${application}`)) as { waiting: boolean }[];

/**
 * With `table` locked, the process's one pool connection waits behind the lock: /readyz is 200.
 * Then PostgreSQL cut: 503; back: 200.
 */
async function readyWhenBusyNotWhenGone(
  proc: Running,
  readyz: string,
  application: string,
  table: string,
): Promise<void> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const holder = db.pool.tx(async (q) => {
    await q.query(sql`LOCK TABLE ${sql.ident(...table.split('.'))} IN ACCESS EXCLUSIVE MODE`);
    await released;
  });
  try {
    await waitFor('the pool connection to wait on the lock', async () => {
      const conns = await poolConnections(application);
      return conns.length === 1 && conns.every((c) => c.waiting);
    });
    const answer = await fetch(readyz);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ ready: true, checks: { postgres: 'ok', schema: 'ok' } });
    // Still busy when it answered.
    expect(await poolConnections(application)).toEqual([{ waiting: true }]);
  } finally {
    release();
    await holder;
  }
  proxy.cut();
  try {
    await waitFor('not ready', async () => (await status(readyz)) === 503, { proc });
    const down = (await (await fetch(readyz)).json()) as { checks: Record<string, string> };
    expect(down.checks.postgres).not.toBe('ok');
  } finally {
    proxy.restore();
  }
  await waitFor('ready again', async () => (await status(readyz)) === 200, { proc });
}

it('a master: busy, ready; PostgreSQL gone, not ready', async () => {
  // A heartbeat (a write of its masters row) every 2 s, a quarter of the expiry.
  const config = join(dir, 'master.yaml');
  writeFileSync(config, masterYaml({ master_expiry_seconds: 8 }, 'deploy/example/master.yaml'));
  const [probe, workerPort] = [await freePort(), await freePort()];
  const master = startService('master', {
    DATABASE_URL: proxy.url,
    DATABASE_POOL_SIZE: '1',
    REDIS_URL: redis.url,
    MASTER_CONFIG: config,
    MASTER_NAME: 'busy-master',
    PROBE_PORT: String(probe),
    WORKER_PORT: String(workerPort),
    LOCAL_WORKER_PASSWORD: 'right',
  });
  running.push(master);
  const readyz = `http://127.0.0.1:${probe}/readyz`;
  await waitFor('master ready', async () => (await status(readyz)) === 200, { proc: master });
  await readyWhenBusyNotWhenGone(master, readyz, 'flotilla-master busy-master', 'masters');
  expect(await master.stop('SIGTERM')).toBe(0);
});

it('an API pod: busy, ready; PostgreSQL gone, not ready', async () => {
  // Its count compaction (every 10 s) rewrites flotilla.count_deltas through its pool.
  const api = await apiProcess({
    databaseUrl: proxy.url,
    redisUrl: redis.url,
    env: { DATABASE_POOL_SIZE: '1' },
  });
  running.push(api.proc);
  await readyWhenBusyNotWhenGone(
    api.proc,
    `http://127.0.0.1:${api.probePort}/readyz`,
    'flotilla-api',
    'flotilla.count_deltas',
  );
  expect(await api.proc.stop('SIGTERM')).toBe(0);
});
