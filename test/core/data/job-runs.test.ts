// Job runs (migration 0017): the first delivery of a job records its run, later ones find it;
// a delivery that rolls back leaves nothing, so its retry runs; two at once, one runs (the
// second waits for the first to commit, then finds its row); old runs are forgotten.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgetJobRuns, recordJobRun } from '../../../services/core/data/index.js';
import { sql } from '../../../services/core/db/pool.js';
import { type Harness, openHarness, uniq } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => {
  await h?.close();
});

const key = () => ({ queue: 'compress-log', jobId: uniq('log') });

describe('job runs', () => {
  it('lets the first delivery of a job through, and no later one', async () => {
    const k = key();
    expect(await h.db.pool.tx((q) => recordJobRun(q, k))).toBe(true);
    expect(await h.db.pool.tx((q) => recordJobRun(q, k))).toBe(false);
    // Another queue's job of the same id is another job.
    expect(await h.db.pool.tx((q) => recordJobRun(q, { ...k, queue: 'expire-masters' }))).toBe(true);
  });

  it('forgets a delivery that rolled back: its retry runs', async () => {
    const k = key();
    await expect(
      h.db.pool.tx(async (q) => {
        expect(await recordJobRun(q, k)).toBe(true);
        throw new Error('the effect failed');
      }),
    ).rejects.toThrow('the effect failed');
    expect(await h.db.pool.tx((q) => recordJobRun(q, k))).toBe(true);
  });

  it('runs one of two deliveries at once, whichever commits first', async () => {
    for (let round = 0; round < 10; round++) {
      const k = key();
      const ran = await Promise.all([0, 1].map(() => h.wide.tx((q) => recordJobRun(q, k))));
      expect(ran.filter(Boolean)).toHaveLength(1);
    }
  });

  it('forgets runs older than asked', async () => {
    const [old, recent] = [key(), key()];
    await h.db.pool.tx(async (q) => {
      await recordJobRun(q, old);
      await recordJobRun(q, recent);
      await q.query(
        sql`UPDATE flotilla.job_runs SET ran_at = now() - interval '2 days' WHERE job_id = ${old.jobId}`,
      );
    });
    expect(await h.db.pool.tx((q) => forgetJobRuns(q, 24 * 3600))).toBeGreaterThanOrEqual(1);
    expect(await h.db.pool.tx((q) => recordJobRun(q, old))).toBe(true);
    expect(await h.db.pool.tx((q) => recordJobRun(q, recent))).toBe(false);
  });
});
