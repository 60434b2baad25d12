// A master busy on every connection of its pool is ready: /readyz asks PostgreSQL through a
// connection of its own (core/health.ts probeDatabase), so it says whether the database
// answers, not whether the pool has a connection free. And it answers 503 when PostgreSQL is
// really gone (cut under it by a proxy), then 200 again when it is back.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { masterYaml } from '../helpers/master-config.js';
import { type PgProxy, startPgProxy } from '../helpers/pg-proxy.js';
import { freePort, type Running, startRedis, startService, status } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

let db: TestDatabase;
let redis: Awaited<ReturnType<typeof startRedis>>;
let proxy: PgProxy;
let dir: string;
let master: Running | undefined;

beforeAll(async () => {
  [db, redis] = await Promise.all([createDatabase('migrated'), startRedis()]);
  proxy = await startPgProxy(db.url);
  dir = mkdtempSync(join(tmpdir(), 'readyz-busy-'));
});
afterAll(async () => {
  await master?.stop('SIGKILL');
  await proxy?.close();
  await redis?.proc.stop('SIGKILL');
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const NAME = 'busy-master';

/** The master's own connections (not its probe's), and whether each waits on a lock. */
const poolConnections = async () =>
  (await db.pool.query(sql`
    SELECT wait_event_type = 'Lock' AS waiting FROM pg_stat_activity
    WHERE datname = ${db.name} AND application_name = ${`flotilla-master ${NAME}`}`)) as {
    waiting: boolean;
  }[];

it('a master whose pool is all busy is ready; one whose PostgreSQL is gone is not', async () => {
  // A heartbeat every 2 s (a quarter of the expiry): the master writes its masters row soon.
  const config = join(dir, 'master.yaml');
  writeFileSync(config, masterYaml({ master_expiry_seconds: 8 }, 'deploy/example/master.yaml'));
  const [probe, workerPort] = [await freePort(), await freePort()];
  master = startService('master', {
    DATABASE_URL: proxy.url,
    DATABASE_POOL_SIZE: '1',
    REDIS_URL: redis.url,
    MASTER_CONFIG: config,
    MASTER_NAME: NAME,
    PROBE_PORT: String(probe),
    WORKER_PORT: String(workerPort),
    LOCAL_WORKER_PASSWORD: 'right',
  });
  const readyz = `http://127.0.0.1:${probe}/readyz`;
  await waitFor('master ready', async () => (await status(readyz)) === 200, { proc: master });

  // Its one connection busy: its next write of the masters row waits behind our lock.
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const holder = db.pool.tx(async (q) => {
    await q.query(sql`LOCK TABLE masters IN ACCESS EXCLUSIVE MODE`);
    await released;
  });
  try {
    await waitFor('every connection of the master to wait on the lock', async () => {
      const conns = await poolConnections();
      return conns.length === 1 && conns.every((c) => c.waiting);
    });
    const answer = await fetch(readyz);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ ready: true, checks: { postgres: 'ok', schema: 'ok' } });
    // Still busy when it answered.
    expect(await poolConnections()).toEqual([{ waiting: true }]);
  } finally {
    release();
    await holder;
  }

  // PostgreSQL gone (every connection cut, new ones refused): not ready; back: ready.
  proxy.cut();
  await waitFor('master not ready', async () => (await status(readyz)) === 503, { proc: master });
  const down = (await (await fetch(readyz)).json()) as { checks: Record<string, string> };
  expect(down.checks.postgres).not.toBe('ok');
  proxy.restore();
  await waitFor('master ready again', async () => (await status(readyz)) === 200, { proc: master });
  expect(await master.stop('SIGTERM')).toBe(0);
  master = undefined;
});
