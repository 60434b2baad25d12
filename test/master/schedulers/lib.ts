// What the scheduler suites share: a database (harness.ts: its own, ids in a random slot),
// masters, builders, configurations, SchedulerManagers listening to the real event bus, and
// the build sets a scheduler made.
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { parseMasterConfig } from '../../../services/core/config/master-config.js';
import {
  addChange,
  findBuilderId,
  masterActive,
  type NewChange,
  transact,
} from '../../../services/core/data/index.js';
import { sql } from '../../../services/core/db/pool.js';
import { busSubscription } from '../../../services/core/events/bus.js';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import { SchedulerManager, type SchedulerManagerOptions } from '../../../services/master/schedulers/index.js';
import { type Harness, openHarness, uniq } from '../../core/data/harness.js';
import { testEnv } from '../../helpers/env.js';

export { uniq };

export const log = createLogger('test', 'silent');

/** A configuration with builders b1 and b2 and the schedulers given (YAML list items). */
export function configWith(schedulers: string, extra = '') {
  return parseMasterConfig(`
workers: [{ name: w1, password: p }]
builders:
  - { name: b1, workers: [w1] }
  - { name: b2, workers: [w1] }
schedulers:
${schedulers}
${extra}`);
}

export interface Cluster {
  h: Harness;
  /** Start a manager for a new master (its own subscriber connection). */
  manager(
    config: SchedulerManagerOptions['config'],
    more?: Partial<SchedulerManagerOptions>,
  ): Promise<{ manager: SchedulerManager; masterid: number }>;
  change(c: Partial<NewChange>): Promise<number>;
  close(): Promise<void>;
}

export async function openCluster(): Promise<Cluster> {
  const h = await openHarness();
  await h.run(async (tx) => {
    for (const name of ['b1', 'b2']) await findBuilderId(tx, name);
  });
  const managers: SchedulerManager[] = [];
  const subscribers: Redis[] = [];
  return {
    h,
    async manager(config, more = {}) {
      const masterid = await h.run((tx) => masterActive(tx, uniq('master')));
      const subscriber = new Redis(testEnv().redisUrl);
      subscribers.push(subscriber);
      // As the master's: subscribed before the schedulers start.
      const subscribe = busSubscription(subscriber);
      await subscribe.ready;
      const manager = new SchedulerManager({
        ctx: h.ctx,
        config,
        masterid: () => masterid,
        log,
        subscribe,
        roundMs: 100,
        maxSleepMs: 100,
        env: {},
        ...more,
      });
      managers.push(manager);
      await manager.start();
      return { manager, masterid };
    },
    change: (c) =>
      transact(h.ctx, (tx) =>
        addChange(tx, { author: 'dev <dev@example.org>', comments: 'work', repository: 'r', ...c }),
      ),
    async close() {
      await Promise.all(managers.map((m) => m.stop({ release: false })));
      for (const s of subscribers) s.disconnect();
      await h.close();
    },
  };
}

/** One cluster for the whole file (opened before its tests, closed after): what it returns reads it. */
export function clusterPerFile(): () => Cluster {
  let c: Cluster | undefined;
  beforeAll(async () => {
    c = await openCluster();
  });
  afterAll(async () => {
    await c?.close();
  });
  return () => c!;
}

export interface MadeBuildset {
  bsid: number;
  reason: string;
  properties: Record<string, unknown>;
  stamps: { branch: string | null; revision: string | null; repository: string; codebase: string }[];
  requests: { builderid: number; priority: number }[];
}

/** The build sets the scheduler named `name` made, oldest first. */
export async function buildsetsOf(h: Harness, name: string): Promise<MadeBuildset[]> {
  const sets = await h.db.pool.query(sql`
    SELECT bs.id, bs.reason FROM buildsets bs
    JOIN buildset_properties p ON p.buildsetid = bs.id AND p.property_name = 'scheduler'
    WHERE p.property_value::jsonb = ${JSON.stringify([name, 'Scheduler'])}::jsonb ORDER BY bs.id`);
  const out: MadeBuildset[] = [];
  for (const bs of sets) {
    const props = await h.db.pool.query(
      sql`SELECT property_name, property_value FROM buildset_properties WHERE buildsetid = ${bs.id}`,
    );
    const stamps = await h.db.pool.query(sql`
      SELECT ss.branch, ss.revision, ss.repository, ss.codebase FROM buildset_sourcestamps bss
      JOIN sourcestamps ss ON ss.id = bss.sourcestampid WHERE bss.buildsetid = ${bs.id} ORDER BY bss.id`);
    const requests = await h.db.pool.query(
      sql`SELECT builderid, priority FROM buildrequests WHERE buildsetid = ${bs.id} ORDER BY builderid`,
    );
    out.push({
      bsid: bs.id,
      reason: bs.reason,
      properties: Object.fromEntries(props.map((p) => [p.property_name, JSON.parse(p.property_value)])),
      stamps: stamps as MadeBuildset['stamps'],
      requests: requests as MadeBuildset['requests'],
    });
  }
  return out;
}

/**
 * A clock that stands still until the test moves it: a scheduler's timers fire exactly when
 * the test says (they look at the clock every maxSleepMs), never because the machine is slow.
 * It starts `beforeMinute` seconds before a whole minute (cron times fall on whole minutes).
 */
export function frozenClock(beforeMinute = 0.5): {
  clock: () => number;
  skip: (s: number) => void;
  now: () => number;
} {
  let t = Math.ceil(Date.now() / 1000 / 60) * 60 - beforeMinute;
  return { clock: () => t, skip: (s) => (t += s), now: () => t };
}

/** A value a scheduler keeps in object_state (undefined when absent). */
export async function schedulerState(
  h: Harness,
  name: string,
  className: string,
  key: string,
): Promise<unknown> {
  const [row] = await h.db.pool.query(sql`
    SELECT s.value_json FROM object_state s JOIN objects o ON o.id = s.objectid
    WHERE o.name = ${name} AND o.class_name = ${className} AND s.name = ${key}`);
  return row ? JSON.parse(row.value_json) : undefined;
}
