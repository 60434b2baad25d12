// An API whose build fails leaves nothing open (issue 29 §3): buildApp is a list of named
// parts (services/api/http/server.ts), and the build is made to fail right after each of them
// in turn (failAt). Each time, what the parts opened must be gone: the read path's PostgreSQL
// connections (read pool, replica monitor, write notices), the events hub's Redis connection,
// the raw log cache's folder, and every timer the API's code set (replica ticks, notices,
// the hub's heartbeats). Everything is on: replicas (the primary named as one: the router
// still monitors it), notices (a staleness allowed), the raw log cache in a folder of the test's.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { masterConfigSchema } from '../../services/core/config/master-config.js';
import { sql } from '../../services/core/db/pool.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { redisClients, TimerWatch } from '../helpers/leftovers.js';
import { type Running, startRedis } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { ApiUnderTest, type AppOptions } from './lib/harness.js';

let db: TestDatabase;
let redis: { url: string; proc: Running };
let dir: string;
beforeAll(async () => {
  // A Redis of its own: the shared one has other files' API connections, of the same names.
  [db, redis] = await Promise.all([createDatabase('migrated'), startRedis()]);
  dir = mkdtempSync(join(tmpdir(), 'flotilla-start-failure-'));
}, 60_000);
afterAll(async () => {
  await redis?.proc.stop('SIGKILL');
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const options = (failAt?: string): AppOptions => ({
  redisUrl: redis.url,
  www: masterConfigSchema.shape.www.parse({
    page_cache: { max_staleness_ms: 200 },
    raw_log_cache: { dir },
  }),
  readReplicas: { urls: [db.url], waitMs: 100, maxLagMs: 1000 },
  ...(failAt ? { failAt } : {}),
});

/** The API's own PostgreSQL connections to the test's database, by application name. */
async function apiBackends(): Promise<string[]> {
  const rows = (await db.pool.query(sql`
    SELECT application_name FROM pg_stat_activity
    WHERE datname = ${db.name} AND application_name LIKE 'flotilla-api-%'
    ORDER BY 1`)) as { application_name: string }[];
  return rows.map((r) => r.application_name);
}

/** What is still open: wait (only a failure waits long) until nothing is, then say what is. */
async function leftovers(watch: TimerWatch): Promise<Record<string, string[]>> {
  const now = async () => ({
    timers: watch.pending(),
    postgres: await apiBackends(),
    redis: await redisClients(redis.url, 'flotilla-api'),
    folders: readdirSync(dir),
  });
  await waitFor(
    'nothing of the API left open',
    async () => Object.values(await now()).every((v) => !v.length),
    {
      timeoutMs: 10_000,
    },
  ).catch(() => {});
  return now();
}

const NOTHING = { timers: [], postgres: [], redis: [], folders: [] };

describe('an API whose build fails', () => {
  let partNames: string[] = [];

  it('has its parts open what the checks look for, and closes them all', async () => {
    const watch = new TimerWatch().start();
    try {
      const api = await ApiUnderTest.on(db, options());
      // A read opens the read pool's connections (again each time: an idle one may have closed).
      await waitFor('the read path’s connections', async () => {
        expect((await api.get('/builders')).status).toBe(200);
        const names = await apiBackends();
        return ['flotilla-api-notices', 'flotilla-api-read', 'flotilla-api-replica-monitor'].every((n) =>
          names.includes(n),
        );
      });
      expect(await redisClients(redis.url, 'flotilla-api')).toEqual([
        'flotilla-api-events',
        'flotilla-api-test',
      ]);
      expect(readdirSync(dir)).toHaveLength(1);
      expect(watch.pending().length).toBeGreaterThan(0);
      await api.stop();
      expect(await leftovers(watch)).toEqual(NOTHING);
    } finally {
      watch.stop();
    }
    // The names of the parts, from a build that fails at a name no part has.
    const err = await ApiUnderTest.on(db, options('no such part')).catch((e: Error) => e);
    partNames = /\((.*)\)$/.exec((err as Error).message)?.[1]?.split(', ') ?? [];
    expect(partNames).toEqual([
      'read pool',
      'read replicas',
      'write notices',
      'raw log cache',
      'sessions',
      'probes',
      'auth routes',
      'api routes',
      'events',
      'metrics',
    ]);
  });

  it('fails at each part in turn and leaves nothing open', async () => {
    expect(partNames.length).toBeGreaterThan(0);
    for (const part of partNames) {
      const watch = new TimerWatch().start();
      try {
        await expect(ApiUnderTest.on(db, options(part)), part).rejects.toThrow(
          `${part} did not start: failAt: ${part}`,
        );
        expect(await leftovers(watch), part).toEqual(NOTHING);
      } finally {
        watch.stop();
      }
    }
  }, 120_000);
});
