// Readiness: a process is ready only while the stores it needs answer, each within a
// short deadline, so that a hung PostgreSQL or Redis takes the pod out of rotation.
import type { Redis } from 'ioredis';
import { loadMigrations, pendingMessage, pendingMigrations } from './db/migrate.js';
import { type ConnectionPool, createPool, type Queryable, sql } from './db/pool.js';
import { withinDeadline } from './lifecycle/within.js';

export interface Check {
  name: string;
  run(): Promise<void>;
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, 'ok' | string>;
}

const DEADLINE_MS = 2000;

function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  return withinDeadline(p, ms, () => new Error(`no answer within ${ms} ms`));
}

/**
 * The connection the readiness checks query PostgreSQL through: one of their own, beside the
 * process's pool. Through the pool, a check waits behind every query ahead of it, so a
 * master whose connections are all busy claiming (a full queue) or an API pod busy reading
 * would answer 503 and be taken out of service for being busy, which is when it is needed
 * most. Its own connection asks whether PostgreSQL answers, not whether the pool has a
 * connection free. Statements end at the checks' deadline, so one that hangs (PostgreSQL
 * frozen) frees the connection for the next check.
 */
export function probeDatabase(url: string, applicationName: string): ConnectionPool {
  return createPool(url, { poolSize: 1, applicationName, statementTimeoutMs: DEADLINE_MS });
}

export function postgresCheck(db: Queryable): Check {
  return { name: 'postgres', run: async () => void (await db.query(sql`SELECT 1`)) };
}

/**
 * The database holds every migration this code needs: a database swapped or restored under a
 * running process (or one that lost its schema) is named as such, not as a failing query.
 */
export function schemaCheck(db: Queryable): Check {
  const migrations = loadMigrations();
  return {
    name: 'schema',
    run: async () => {
      const pending = await pendingMigrations(db, migrations);
      if (pending.length) throw new Error(pendingMessage(pending));
    },
  };
}

export function redisCheck(redis: Redis): Check {
  return {
    name: 'redis',
    run: async () => {
      // Do not queue the ping while disconnected: a queued command answers late, not never.
      if (redis.status !== 'ready') throw new Error(`connection is ${redis.status}`);
      await redis.ping();
    },
  };
}

export async function readiness(checks: readonly Check[]): Promise<Readiness> {
  const results = await Promise.all(
    checks.map(async (c) => {
      try {
        await withDeadline(c.run(), DEADLINE_MS);
        return [c.name, 'ok'] as const;
      } catch (err) {
        return [c.name, (err as Error).message || 'failed'] as const;
      }
    }),
  );
  return { ready: results.every(([, r]) => r === 'ok'), checks: Object.fromEntries(results) };
}
