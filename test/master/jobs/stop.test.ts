// stop(): a running job is let finish before the connections close, and nothing is left open:
// a process that started the jobs, used both queues and stopped them exits by itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compressLogJobId } from '../../../services/master/jobs/compress-log.js';
import { QUEUES } from '../../../services/master/jobs/index.js';
import { type Harness, openHarness } from '../../core/data/harness.js';
import { testEnv } from '../../helpers/env.js';
import { start } from '../../helpers/processes.js';
import { JobsUnderTest, Logs, sample, waitFor } from './helpers.js';

let h: Harness;
let logs: Logs;
let masterid: number;

beforeAll(async () => {
  h = await openHarness();
  logs = await Logs.open(h);
  masterid = logs.masterid;
});
afterAll(async () => {
  await h?.close();
});

describe('stop', () => {
  it('lets the running job finish, then closes', async () => {
    const suite = new JobsUnderTest(h);
    try {
      const jobs = await suite.start({ masterid: () => masterid, expirePeriodMs: 3_600_000 });
      const logid = await logs.write('held', 500);
      const release = await logs.hold(logid);
      await jobs.queueCompressLog(logid);
      const state = async () =>
        (await suite.queue(QUEUES.compressLog).getJob(compressLogJobId(logid)))?.getState();
      await waitFor('the job to be active', async () => (await state()) === 'active');

      // What happens, in order: stop() must not be done before the job it waits for is.
      const order: string[] = [];
      const stopping = jobs.stop().then(() => order.push('stopped'));
      // The job is still held, and still active, after stop() was asked.
      expect(await state()).toBe('active');
      order.push('released');
      await release();
      await stopping;
      expect(order).toEqual(['released', 'stopped']);
      expect(await state()).toBe('completed');
      expect((await logs.rows(logid)).length).toBe(1);
    } finally {
      await suite.closeAll();
    }
  });

  it('leaves nothing open: a process that used and stopped the jobs exits by itself', async () => {
    const suite = new JobsUnderTest(h);
    const logid = await logs.write('in the child', 300);
    const child = start(process.execPath, ['--import', 'tsx', 'test/master/jobs/exit-check.ts'], {
      JOBS_DATABASE_URL: h.db.url,
      JOBS_REDIS_URL: testEnv().redisUrl,
      JOBS_PREFIX: suite.prefix,
      JOBS_LOGID: String(logid),
      JOBS_MASTERID: String(masterid),
    });
    try {
      await waitFor('the child to stop its jobs', async () => child.output().includes('stopped\n'));
      // Nothing left open: it exits by itself (the limit only ends a test that fails).
      await waitFor('the child to exit by itself', () => child.child.exitCode !== null);
      expect(await child.exited, child.output()).toBe(0);
      const out = child.output();
      const done = (queue: string) =>
        sample(out, 'flotilla_jobs_duration_seconds_count', { queue, outcome: 'completed' }) ?? 0;
      expect(done(QUEUES.compressLog)).toBe(1);
      expect(done(QUEUES.expireMasters)).toBeGreaterThanOrEqual(2);
      expect((await logs.rows(logid)).length).toBe(1);
    } finally {
      await child.stop('SIGKILL', 0);
      await suite.closeAll();
    }
  });
});
