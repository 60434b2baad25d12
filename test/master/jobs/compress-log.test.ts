// compress-log through real BullMQ: a finished log of many chunks ends up merged and stored
// with the configured codec, every read identical before, during and after; queueing twice
// runs once, a second run changes nothing; a failing job is retried with backoff until it
// succeeds; `none` queues nothing.
import type { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CHUNK_LINES } from '../../../services/core/logs/chunking.js';
import { compressLogJobId } from '../../../services/master/jobs/compress-log.js';
import { type Jobs, QUEUES } from '../../../services/master/jobs/index.js';
import { type Harness, openHarness } from '../../core/data/harness.js';
import { JobsUnderTest, Logs, waitFor } from './helpers.js';

let h: Harness;
let logs: Logs;
let suite: JobsUnderTest;
let jobs: Jobs;
let masterid: number;

beforeAll(async () => {
  h = await openHarness();
  logs = await Logs.open(h);
  masterid = logs.masterid;
  suite = new JobsUnderTest(h);
  jobs = await suite.start({ masterid: () => masterid, expirePeriodMs: 3_600_000 });
});
afterAll(async () => {
  await suite?.closeAll();
  await h?.close();
});

const job = async (logid: number): Promise<Job | undefined> =>
  suite.queue(QUEUES.compressLog).getJob(compressLogJobId(logid));
const state = async (logid: number): Promise<string> => (await (await job(logid))?.getState()) ?? 'none';
const completed = async (logid: number) => (await state(logid)) === 'completed';

const runs = () => suite.completed(QUEUES.compressLog);

describe('compress-log', () => {
  it('merges a finished log into few gzip rows, every read the same as before', async () => {
    const n = 2600;
    const logid = await logs.write('to compress', n);
    const before = await logs.rows(logid);
    expect(before.length).toBeGreaterThan(300);
    const reads = Logs.readRanges(before, n);

    await jobs.queueCompressLog(logid);
    await waitFor('the job to complete', () => completed(logid));
    const after = await logs.rows(logid);
    expect(after.length).toBeLessThan(10);
    for (const r of after) {
      expect(r.compressed).toBe(1);
      expect(r.last_line - r.first_line).toBeLessThanOrEqual(MAX_CHUNK_LINES);
    }
    expect(Logs.readRanges(after, n)).toEqual(reads);
  });

  it('stores what the queueing master is configured with: zstd', async () => {
    const zstd = await suite.start({ masterid: () => masterid, codec: 'zstd', expirePeriodMs: 3_600_000 });
    try {
      const logid = await logs.write('zstd', 1200, { per: 13 });
      const whole = Logs.text(await logs.rows(logid), 0, 1199);
      await zstd.queueCompressLog(logid);
      await waitFor('the job to complete', () => completed(logid));
      const rows = await logs.rows(logid);
      expect(rows.length).toBeLessThan(5);
      expect(rows.every((r) => r.compressed === 4)).toBe(true);
      expect(Logs.text(rows, 0, 1199)).toBe(whole);
    } finally {
      await zstd.stop();
    }
  });

  it('keeps reads correct while it compresses: each read is the old rows or the new, never a mix', async () => {
    // 500 rows: enough for reads to span the swap; each read is the whole log, so a larger
    // one only made the reader's loop the file's cost (6,000 lines: 87 s at load 12-53).
    const n = 1500;
    const small = n / 3;
    const logid = await logs.write('read while compressing', n, { per: 3 });
    const whole = Logs.text(await logs.rows(logid), 0, n - 1);
    const layouts = new Set<number>();
    let done = false;
    let reads = 0;
    let wrong = 0;
    const reader = (async () => {
      while (!done) {
        const rows = await logs.rows(logid);
        layouts.add(rows.length);
        if (Logs.text(rows, 0, n - 1) !== whole) wrong++;
        reads++;
      }
    })();
    await jobs.queueCompressLog(logid);
    await waitFor('the job to complete', () => completed(logid));
    // A read in flight when the job completed may have begun before the swap: the reader goes
    // on until one read has seen the merged rows, whatever the machine's load.
    await waitFor('a read to see the merged rows', () => [...layouts].some((l) => l !== small));
    done = true;
    await reader;
    expect(wrong).toBe(0);
    // The reads spanned the swap: some saw the 500 small rows, some the merged ones, none anything else.
    expect([...layouts.keys()].sort((a, b) => b - a)).toEqual([small, (await logs.rows(logid)).length]);
    expect(reads).toBeGreaterThan(2);
  });

  it('runs once when queued twice at once, once more never: a later run changes nothing', async () => {
    const logid = await logs.write('twice', 1500);
    const before = await runs();
    await Promise.all([jobs.queueCompressLog(logid), jobs.queueCompressLog(logid)]);
    await waitFor('the job to complete', () => completed(logid));
    const merged = await logs.rows(logid);
    await jobs.queueCompressLog(logid);
    expect(await state(logid)).toBe('completed');
    expect(await runs()).toBe(before + 1);

    // Past the hour a completed job is kept, queueing runs it again: it saves nothing.
    await (await job(logid))!.remove();
    await jobs.queueCompressLog(logid);
    await waitFor('the second job to complete', () => completed(logid));
    expect(await runs()).toBe(before + 2);
    expect((await job(logid))!.returnvalue).toBe(0);
    expect(await logs.rows(logid)).toEqual(merged);
  });

  it('retries a failing job with growing delays until it succeeds', async () => {
    const patient = await suite.start({
      masterid: () => masterid,
      expirePeriodMs: 3_600_000,
      compressRetry: { attempts: 8, backoffMs: 200 },
    });
    const logid = await logs.write('not finished yet', 1200, { finish: false });
    await patient.queueCompressLog(logid);
    // LOG_NOT_FINISHED: each failure puts the job back, delayed 200 ms, then 400 ms...; the
    // start of each attempt is its processedOn.
    const starts = new Set<number>();
    await waitFor(
      'three attempts',
      async () => {
        const j = await job(logid);
        if (j?.processedOn) starts.add(j.processedOn);
        return starts.size >= 3;
      },
      { everyMs: 10 },
    );
    const failing = (await job(logid))!;
    expect(failing.failedReason).toMatch(/not finished/);
    expect(failing.opts.backoff).toEqual({ type: 'exponential', delay: 200 });
    expect(await logs.rows(logid)).toHaveLength(Math.ceil(1200 / 7));
    const [a, b, c] = [...starts];
    expect(b! - a!).toBeGreaterThanOrEqual(200);
    expect(c! - b!).toBeGreaterThanOrEqual(400);

    await logs.finish(logid);
    await waitFor('the job to complete', () => completed(logid));
    const done = (await job(logid))!;
    expect(done.attemptsMade).toBeGreaterThanOrEqual(3);
    expect(done.attemptsMade).toBeLessThan(8);
    expect((await logs.rows(logid)).every((r) => r.compressed === 1)).toBe(true);
    await patient.stop();
  });

  it('gives up after its attempts, and queueing the log again retries it', async () => {
    const logid = await logs.write('finished much later', 50, { finish: false });
    await jobs.queueCompressLog(logid);
    await waitFor('the job to fail for good', async () => (await state(logid)) === 'failed');
    expect((await job(logid))!.attemptsMade).toBe(4);

    await logs.finish(logid);
    await jobs.queueCompressLog(logid);
    await waitFor('the retried job to complete', () => completed(logid));
    expect((await logs.rows(logid)).length).toBe(1);
  });

  it('fails at once, without retries, for a log that does not exist', async () => {
    const logid = 2_000_000_000;
    await jobs.queueCompressLog(logid);
    await waitFor('the job to fail', async () => (await state(logid)) === 'failed');
    const failed = (await job(logid))!;
    expect(failed.attemptsMade).toBe(1);
    expect(failed.failedReason).toMatch(/no log/);
  });

  it('queues nothing when log_compression is none', async () => {
    const none = await suite.start({ masterid: () => masterid, codec: 'none', expirePeriodMs: 3_600_000 });
    const logid = await logs.write('stays', 100);
    const before = await logs.rows(logid);
    await none.queueCompressLog(logid);
    expect(await job(logid)).toBeUndefined();
    expect(await logs.rows(logid)).toEqual(before);
    await none.stop();
  });
});
