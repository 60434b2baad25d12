// /metrics of the jobs: queue depth per state with the right numbers (jobs made to wait, to
// sit delayed, to hang active and to fail), failed attempts counted, durations observed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compressLogJobId } from '../../../services/master/jobs/compress-log.js';
import { type Jobs, QUEUES } from '../../../services/master/jobs/index.js';
import { type Harness, openHarness } from '../../core/data/harness.js';
import { JobsUnderTest, Logs, sample, waitFor } from './helpers.js';

let h: Harness;
let logs: Logs;
let suite: JobsUnderTest;
let jobs: Jobs;

beforeAll(async () => {
  h = await openHarness();
  logs = await Logs.open(h);
  const masterid = logs.masterid;
  suite = new JobsUnderTest(h);
  jobs = await suite.start({
    masterid: () => masterid,
    expirePeriodMs: 3_600_000,
    compressRetry: { attempts: 3, backoffMs: 50 },
  });
});
afterAll(async () => {
  await suite?.closeAll();
  await h?.close();
});

const compress = { queue: QUEUES.compressLog };
async function depth(): Promise<Record<string, number | undefined>> {
  const { body } = await jobs.metrics();
  const of = (state: string) => sample(body, 'flotilla_jobs_queue_depth', { ...compress, state });
  return { waiting: of('waiting'), active: of('active'), delayed: of('delayed'), failed: of('failed') };
}

describe('jobs metrics', () => {
  it('serves Prometheus text with every series, zero before anything happened', async () => {
    const { contentType, body } = await jobs.metrics();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(body).toContain('# TYPE flotilla_jobs_queue_depth gauge');
    expect(body).toContain('# TYPE flotilla_jobs_failures_total counter');
    expect(body).toContain('# TYPE flotilla_jobs_duration_seconds histogram');
    expect(await depth()).toEqual({ waiting: 0, active: 0, delayed: 0, failed: 0 });
    expect(sample(body, 'flotilla_jobs_failures_total', compress)).toBe(0);
    expect(sample(body, 'flotilla_jobs_failures_total', { queue: QUEUES.expireMasters })).toBe(0);
  });

  it('counts waiting, delayed, active and failed jobs, failed attempts and durations', async () => {
    const queue = suite.queue(QUEUES.compressLog);
    // Waiting: two jobs queued while the queue is paused.
    const waiting = [await logs.write('w1', 20), await logs.write('w2', 20)];
    await queue.pause();
    for (const id of waiting) await jobs.queueCompressLog(id);
    // Delayed: one job due in an hour.
    const later = await logs.write('later', 20);
    await queue.add(
      'compress-log',
      { logid: later, codec: 'gz' },
      { jobId: compressLogJobId(later), delay: 3_600_000 },
    );
    // Failing: a log that is never finished, three attempts.
    const unfinished = await logs.write('unfinished', 20, { finish: false });
    await jobs.queueCompressLog(unfinished);
    expect(await depth()).toEqual({ waiting: 3, active: 0, delayed: 1, failed: 0 });

    // Active: a job that waits on the log's row lock, which the test holds.
    const held = await logs.write('held', 20);
    const release = await logs.hold(held);
    await jobs.queueCompressLog(held);
    await queue.resume();
    const state = async (logid: number) => (await queue.getJob(compressLogJobId(logid)))?.getState();
    await waitFor('the unfinished log to fail for good', async () => (await state(unfinished)) === 'failed');
    await waitFor('the waiting jobs to complete', async () =>
      (await Promise.all(waiting.map(state))).every((s) => s === 'completed'),
    );
    await waitFor('the held job to be active', async () => (await state(held)) === 'active');
    expect(await depth()).toEqual({ waiting: 0, active: 1, delayed: 1, failed: 1 });

    await release();
    await waitFor('the held job to complete', async () => (await state(held)) === 'completed');
    expect(await depth()).toEqual({ waiting: 0, active: 0, delayed: 1, failed: 1 });

    const { body } = await jobs.metrics();
    expect(sample(body, 'flotilla_jobs_failures_total', compress)).toBe(3);
    expect(sample(body, 'flotilla_jobs_duration_seconds_count', { ...compress, outcome: 'failed' })).toBe(3);
    expect(sample(body, 'flotilla_jobs_duration_seconds_count', { ...compress, outcome: 'completed' })).toBe(
      3,
    );
    // The held job waited at least as long as the test held the lock: in a bucket above 0.01 s.
    expect(
      sample(body, 'flotilla_jobs_duration_seconds_bucket', {
        ...compress,
        outcome: 'completed',
        le: '0.01',
      }),
    ).toBeLessThan(3);
  });
});
