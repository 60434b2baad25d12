// expire-masters through real BullMQ: one run per period across three masters running the
// scheduler; a silent master expired with its housekeeping while a heart-beating one and the
// master running the job are not; claims nobody renews released, claims renewed kept; the
// count deltas folded.
import { QueueEvents } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimBuildRequests } from '../../../services/core/data/buildrequests.js';
import { newBuild } from '../../../services/core/data/builds.js';
import { addLog, appendLog } from '../../../services/core/data/logs.js';
import { masterActive } from '../../../services/core/data/masters.js';
import { newStep, startStep } from '../../../services/core/data/steps.js';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { compressLogJobId } from '../../../services/master/jobs/compress-log.js';
import { unclaimAfter } from '../../../services/master/jobs/expire-masters.js';
import { QUEUES } from '../../../services/master/jobs/index.js';
import { type Harness, insertMaster, openHarness, pendingRequests, uniq } from '../../core/data/harness.js';
import { testEnv } from '../../helpers/env.js';
import { startRedis } from '../../helpers/processes.js';
import { JobsUnderTest, sample, waitFor } from './helpers.js';

const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('expire-masters with three masters running the scheduler', () => {
  let h: Harness;
  let jobs: JobsUnderTest;
  beforeAll(async () => {
    h = await openHarness();
    jobs = new JobsUnderTest(h);
  });
  afterAll(async () => {
    await jobs?.closeAll();
    await h?.close();
  });

  it('runs once per period, on one master at a time', async () => {
    const period = 1000;
    const events = new QueueEvents(QUEUES.expireMasters, {
      connection: { url: testEnv().redisUrl },
      prefix: jobs.prefix,
    });
    const runs: string[] = [];
    const failures: string[] = [];
    events.on('completed', ({ jobId }) => runs.push(jobId));
    events.on('failed', ({ jobId, failedReason }) => failures.push(`${jobId}: ${failedReason}`));
    await events.waitUntilReady();
    try {
      const ids = await Promise.all([1, 2, 3].map(() => h.run((tx) => masterActive(tx, uniq('master')))));
      const masters = await Promise.all(
        ids.map((id) => jobs.start({ masterid: () => id, expirePeriodMs: period })),
      );
      await waitFor('four runs', () => runs.length >= 4);
      // Stopping lets a run in progress finish; then every run has reported.
      await Promise.all(masters.map((m) => m.stop()));
      const ranOn = await Promise.all(
        masters.map(async (m) => {
          const text = await m.registry.getSingleMetricAsString('flotilla_jobs_duration_seconds');
          return sample(text, 'flotilla_jobs_duration_seconds_count', {
            queue: QUEUES.expireMasters,
            outcome: 'completed',
          });
        }),
      );
      const total = ranOn.reduce<number>((a, b) => a + (b ?? 0), 0);
      await waitFor('the last completions to arrive', async () => runs.length >= total);

      expect(failures).toEqual([]);
      // One job per period slot (the one scheduler all three share: schedulers of their own
      // would name other jobs), each run on exactly one master.
      // By slot: two runs' completions can reach this listener in the other order on a busy
      // machine (seen in CI, 2026-11-29: two slots a period apart heard last first).
      const slots = runs
        .map((id) => Number(/^repeat:expire-masters:(\d+)$/.exec(id)?.[1]))
        .sort((a, b) => a - b);
      expect(new Set(slots).size).toBe(runs.length);
      // A period apart at least. Not a multiple of it: a slot missed on a busy machine is
      // made up at a slot BullMQ aligns to the clock, not to the first run.
      for (let i = 1; i < slots.length; i++) expect(slots[i]! - slots[i - 1]!).toBeGreaterThanOrEqual(period);
      expect(total).toBe(runs.length);
      // None of them expired another: they are all alive.
      const active = await h.db.pool.query(sql`SELECT active FROM masters WHERE id = ANY(${ids}::int[])`);
      expect(active.map((r) => r.active)).toEqual([1, 1, 1]);
    } finally {
      await events.close();
    }
  });
});

describe('expire-masters after Redis forgot everything', () => {
  let h: Harness;
  let jobs: JobsUnderTest;
  beforeAll(async () => {
    h = await openHarness();
    jobs = new JobsUnderTest(h);
  });
  afterAll(async () => {
    await jobs?.closeAll();
    await h?.close();
  });

  it('runs again: the masters create the schedule anew', async () => {
    // A Redis of its own, restarted empty (no persistence) on the same port.
    let redis = await startRedis();
    try {
      const id = await h.run((tx) => masterActive(tx, uniq('master')));
      const master = await jobs.start({ masterid: () => id, expirePeriodMs: 300, redis: redis.url });
      await waitFor('a first run', async () => (await jobs.completed(QUEUES.expireMasters)) >= 1);
      await redis.proc.stop('SIGKILL');
      redis = await startRedis(redis.port);
      const before = await jobs.completed(QUEUES.expireMasters);
      await waitFor(
        'runs after the loss',
        async () => (await jobs.completed(QUEUES.expireMasters)) >= before + 2,
      );
      await master.stop();
    } finally {
      await redis.proc.stop('SIGKILL');
    }
  });

  it('stops with its Redis away, not waiting for it to come back', async () => {
    // BullMQ's graceful close waits for a reconnecting connection's 'end', which never comes
    // (jobs/close-queues.ts): this stop never returned before.
    const redis = await startRedis();
    try {
      const id = await h.run((tx) => masterActive(tx, uniq('master')));
      const master = await jobs.start({ masterid: () => id, expirePeriodMs: 300, redis: redis.url });
      await waitFor('a first run', async () => (await jobs.completed(QUEUES.expireMasters)) >= 1);
      await redis.proc.stop('SIGKILL');
      let stopped = false;
      void master.stop().then(() => {
        stopped = true;
      });
      await waitFor('the stop to return', () => stopped);
    } finally {
      await redis.proc.stop('SIGKILL');
    }
  });
});

describe('expire-masters on the fixture', () => {
  // A heartbeat every 300 ms against an expiry of 4 s: a loaded machine can delay a beat
  // many times over and the beating master still never looks silent.
  const EXPIRY_SECONDS = 4;
  let h: Harness;
  let jobs: JobsUnderTest;
  let self: number;
  let beating: number;
  let goesSilent: number;
  let heartbeat: NodeJS.Timeout | undefined;
  let build: { buildid: number };
  let openLog: number;
  let deadClaim: number;
  let leftover: number;
  let renewed: number;

  beforeAll(async () => {
    h = await openHarness('fixture');
    jobs = new JobsUnderTest(h);
    // Master 1 (the oracle's Buildbot) has been silent for an hour, with a build running and a claim.
    await h.db.pool.query(
      sql`UPDATE masters SET active = 1, last_active = ${nowSeconds() - 3600} WHERE id = 1`,
    );
    // The master running the jobs lags on its own heartbeat; it must still never expire itself.
    self = await h.run((tx) => insertMaster(tx, uniq('self'), 1, 0));
    const beatingName = uniq('beating');
    beating = await h.run((tx) => masterActive(tx, beatingName));
    heartbeat = setInterval(() => void h.run((tx) => masterActive(tx, beatingName)), 300);
    goesSilent = await h.run((tx) => masterActive(tx, uniq('silent')));
    const inactive = await h.run((tx) => insertMaster(tx, uniq('gone-before'), 0, nowSeconds() - 7200));
    await h.run(async (tx) => {
      [deadClaim, leftover, renewed] = (await pendingRequests(tx, 1, 3)) as [number, number, number];
      expect(await claimBuildRequests(tx, [deadClaim], 1)).toBe(true);
      build = await newBuild(tx, { builderid: 1, buildrequestid: deadClaim, workerid: 2, masterid: 1 });
      const step = (await newStep(tx, build.buildid, 'compile')).stepid;
      await startStep(tx, step);
      // Its running step's log, open, in chunks of a line each.
      openLog = await addLog(tx, step, 'stdio', 's');
      for (let i = 0; i < 3; i++) await appendLog(tx, openLog, `o line ${i}\n`);
      // A claim an earlier expiry left behind (Buildbot 3.7 looks claims up by the wrong id),
      // unrenewed for over an hour; and a live master's claim it renewed a minute ago.
      expect(await claimBuildRequests(tx, [leftover], inactive, nowSeconds() - 3700)).toBe(true);
      expect(await claimBuildRequests(tx, [renewed], beating, nowSeconds() - 60)).toBe(true);
    });
  });
  afterAll(async () => {
    clearInterval(heartbeat);
    await jobs?.closeAll();
    await h?.close();
  });

  it('expires the silent masters with their housekeeping, never a heart-beating one or itself', async () => {
    await jobs.start({ masterid: () => self, expirySeconds: EXPIRY_SECONDS, expirePeriodMs: 500 });
    const activeOf = async (id: number) =>
      (await h.db.pool.query(sql`SELECT active FROM masters WHERE id = ${id}`))[0].active as number;
    await waitFor('master 1 to expire', async () => (await activeOf(1)) === 0);
    await waitFor('the master that went silent to expire', async () => (await activeOf(goesSilent)) === 0);
    // Runs over more than the expiry time after that: anyone who stopped beating would be gone.
    const runs = await jobs.completed(QUEUES.expireMasters);
    await waitFor(
      'runs over another expiry time',
      async () => (await jobs.completed(QUEUES.expireMasters)) >= runs + 2 * EXPIRY_SECONDS + 1,
    );
    expect(await activeOf(beating)).toBe(1);
    expect(await activeOf(self)).toBe(1);

    const [b] = await h.db.pool.query(
      sql`SELECT results, complete_at FROM builds WHERE id = ${build.buildid}`,
    );
    expect(b.results).toBe(Results.RETRY);
    expect(b.complete_at).not.toBeNull();
    const open = await h.db.pool.query(
      sql`SELECT id FROM steps WHERE buildid = ${build.buildid} AND complete_at IS NULL`,
    );
    expect(open).toEqual([]);
    // The housekeeping finished the dead master's log, and, as that master never will, had
    // it compressed (recorded as run once by its job id).
    const [l] = await h.db.pool.query(sql`SELECT complete FROM logs WHERE id = ${openLog}`);
    expect(l.complete).toBe(1);
    await waitFor('the finished log compressed', async () => {
      const [r] = await h.db.pool.query(
        sql`SELECT count(*)::int AS n FROM flotilla.job_runs
            WHERE queue = ${QUEUES.compressLog} AND job_id = ${compressLogJobId(openLog)}`,
      );
      return r.n === 1;
    });
    const held = async (table: string) =>
      (await h.db.pool.query(sql`SELECT count(*)::int AS n FROM ${sql.ident(table)} WHERE masterid = 1`))[0]
        .n;
    expect(await held('scheduler_masters')).toBe(0);
    expect(await held('changesource_masters')).toBe(0);
    expect(await held('builder_masters')).toBe(0);
    expect(await held('connected_workers')).toBe(0);
  });

  it('releases claims nobody renews (the dead master’s, an old leftover) and keeps renewed ones', async () => {
    const claims = await h.db.pool.query(
      sql`SELECT brid, masterid FROM buildrequest_claims WHERE brid IN (${deadClaim}, ${leftover}, ${renewed})`,
    );
    expect(claims).toEqual([{ brid: renewed, masterid: beating }]);
    expect(unclaimAfter({ expirySeconds: EXPIRY_SECONDS })).toBe(300);
  });

  it('folds the count deltas', async () => {
    await waitFor('the deltas to be folded', async () => {
      const [r] = await h.db.pool.query(sql`
        SELECT count(*)::int AS n FROM (
          SELECT 1 FROM flotilla.count_deltas GROUP BY tbl, scope HAVING count(*) > 1) unfolded`);
      return r.n === 0;
    });
  });
});

describe('the unclaim bound', () => {
  it('defaults to the expiry time, at least five claim renewals, and refuses less than two', () => {
    expect(unclaimAfter({})).toBe(600);
    expect(unclaimAfter({ expirySeconds: 900 })).toBe(900);
    expect(unclaimAfter({ expirySeconds: 10 })).toBe(300);
    expect(unclaimAfter({ expirySeconds: 10, unclaimAfterSeconds: 120 })).toBe(120);
    expect(() => unclaimAfter({ unclaimAfterSeconds: 60 })).toThrow(/at least 120/);
  });
});
