// A job that puts itself back to wait (a reporter's busy request throws BullMQ's DelayedError)
// is counted as delayed, not failed: JobMetrics knows it by the error's name, since it is
// loaded at every master's start and BullMQ only once the jobs start (master.ts).
import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { JobMetrics } from '../../../services/master/jobs/metrics.js';

const job = { id: '1', attemptsMade: 0 } as Job;
const sample = async (m: JobMetrics, line: RegExp) =>
  Number((await m.registry.metrics()).match(line)?.[1] ?? 0);
const attempts = (m: JobMetrics, outcome: string) =>
  sample(
    m,
    new RegExp(`^flotilla_jobs_duration_seconds_count\\{queue="q",outcome="${outcome}"\\} (\\d+)$`, 'm'),
  );
const failures = (m: JobMetrics) => sample(m, /^flotilla_jobs_failures_total\{queue="q"\} (\d+)$/m);

describe("the jobs' metrics", () => {
  it("count BullMQ's DelayedError as delayed and any other error as a failure", async () => {
    const m = new JobMetrics([]);
    await expect(m.run('q', job, () => Promise.reject(new DelayedError()))).rejects.toBeInstanceOf(
      DelayedError,
    );
    expect(await attempts(m, 'delayed')).toBe(1);
    expect(await failures(m)).toBe(0);
    await expect(m.run('q', job, () => Promise.reject(new UnrecoverableError('gone')))).rejects.toThrow(
      'gone',
    );
    expect(await attempts(m, 'failed')).toBe(1);
    expect(await failures(m)).toBe(1);
  });
});
