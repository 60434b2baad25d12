// Jobs across a Redis failover that loses their completion: BullMQ delivers them again, and
// they have their effect once (core/data/job-runs.ts). On a real Sentinel deployment
// (test/helpers/sentinel.ts) the replica's link is cut once it has the queued jobs; the
// master's jobs then run them on the primary, which is killed; the replica is promoted
// without their completions, and the jobs come round again. Counted: BullMQ
// completed each job twice, each had its effect once (one recorded run, the log's rows as the
// first run left them), and the second deliveries are on /metrics as repeats.
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { settledWithin } from '../../../services/core/lifecycle/within.js';
import { redisConnectionOptions } from '../../../services/core/redis.js';
import { compressLogJobId } from '../../../services/master/jobs/compress-log.js';
import { QUEUES } from '../../../services/master/jobs/index.js';
import { type Harness, openHarness } from '../../core/data/harness.js';
import { type SentinelDeployment, startSentinelDeployment } from '../../helpers/sentinel.js';
import { JobsUnderTest, Logs, sample, waitFor } from './helpers.js';

let h: Harness;
let logs: Logs;
let deployment: SentinelDeployment;
let suite: JobsUnderTest;
let producer: Queue | undefined;

beforeAll(async () => {
  [h, deployment] = await Promise.all([openHarness(), startSentinelDeployment({ cuttableLink: true })]);
  logs = await Logs.open(h);
  suite = new JobsUnderTest(h);
});
afterAll(async () => {
  try {
    // Bounded: after a failover that never came, the clients would wait for a primary for good.
    await settledWithin(Promise.all([producer?.close(), suite?.closeAll()]), 30_000);
  } finally {
    await deployment?.stop();
    await h?.close();
  }
});

const LOGS = 3;

async function repeats(queue: string): Promise<number> {
  let total = 0;
  for (const jobs of suite.all()) {
    const text = await jobs.registry.getSingleMetricAsString('flotilla_jobs_repeats_total');
    total += sample(text, 'flotilla_jobs_repeats_total', { queue }) ?? 0;
  }
  return total;
}

/** The jobs' states on the primary now, and what the master counted: for a failure's message. */
async function where(logids: number[]): Promise<string> {
  const q = new Queue(QUEUES.compressLog, {
    connection: redisConnectionOptions(deployment.target, { connectionName: 'test-look' }),
    prefix: suite.prefix,
  });
  try {
    const states = await Promise.all(
      logids.map(async (id) => (await q.getJob(compressLogJobId(id)))?.getState() ?? 'none'),
    );
    const text = await suite.all()[0]?.registry.metrics();
    const samples = text
      ?.split('\n')
      .filter((l) => /^flotilla_jobs_(repeats_total|failures_total|duration_seconds_count)/.test(l));
    return JSON.stringify({ primary: await deployment.currentPrimaryPort(), states, samples });
  } finally {
    await q.close();
  }
}

describe('compress-log jobs whose completion a Redis failover lost', () => {
  it('are delivered again and have their effect once', { timeout: 180_000 }, async () => {
    const logids: number[] = [];
    for (let i = 0; i < LOGS; i++) logids.push(await logs.write(`failover ${i}`, 1200));
    // Queued as a master queues them, and on the replica before it is stopped.
    producer = new Queue(QUEUES.compressLog, {
      connection: redisConnectionOptions(deployment.target, { connectionName: 'test-producer' }),
      prefix: suite.prefix,
    });
    for (const logid of logids)
      await producer.add('compress-log', { logid, codec: 'gz' }, { jobId: compressLogJobId(logid) });
    // BullMQ's connection is an ioredis client; its type here names only what BullMQ uses.
    expect(await ((await producer.client) as unknown as Redis).wait(1, 10_000)).toBe(1);
    await producer.close();
    producer = undefined;

    await deployment.cutReplicaLink();
    const jobs = await suite.start({
      masterid: () => logs.masterid,
      expirePeriodMs: 3_600_000,
      redis: deployment.target,
    });
    await waitFor(
      'the jobs to run on the primary',
      async () => (await suite.completed(QUEUES.compressLog)) >= LOGS,
      { timeoutMs: 120_000 },
    );
    const compressed = await Promise.all(logids.map((id) => logs.rows(id)));
    expect(compressed.every((rows) => rows.length < 5 && rows.every((r) => r.compressed === 1))).toBe(true);

    await deployment.killPrimary();
    await deployment.waitForFailover();
    // The promoted replica holds the jobs as queued, never run: the worker takes them again.
    await waitFor(
      'the jobs to come round again and do nothing',
      async () => (await repeats(QUEUES.compressLog)) >= LOGS,
      { timeoutMs: 120_000 },
    ).catch(async (err: Error) => {
      err.message += `; where they stand: ${await where(logids)}`;
      throw err;
    });

    expect(await suite.completed(QUEUES.compressLog)).toBe(2 * LOGS);
    expect(await repeats(QUEUES.compressLog)).toBe(LOGS);
    const runs = await h.db.pool.query(
      sql`SELECT job_id, count(*)::int AS n FROM flotilla.job_runs
          WHERE queue = ${QUEUES.compressLog} GROUP BY job_id ORDER BY job_id`,
    );
    expect(runs).toEqual(
      logids
        .map((id) => ({ job_id: compressLogJobId(id), n: 1 }))
        .sort((a, b) => a.job_id.localeCompare(b.job_id)),
    );
    expect(await Promise.all(logids.map((id) => logs.rows(id)))).toEqual(compressed);
    await jobs.stop();
  });
});
