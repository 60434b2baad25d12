// retention through real BullMQ: a master with horizons configured schedules the cluster's
// run, a run deletes what is past its horizon and leaves the rest, and /metrics counts what
// it deleted. A master without the section schedules nothing, and removes the schedule.
import { describe, expect, it } from 'vitest';
import { retention } from '../../../services/core/config/master-config/retention.js';
import { sql } from '../../../services/core/db/pool.js';
import { QUEUES } from '../../../services/master/jobs/index.js';
import { RETENTION_SCHEDULER_ID } from '../../../services/master/jobs/retention.js';
import { insertBuilder, insertMaster } from '../../core/data/harness.js';
import { makeBuild } from '../../core/data/retention-builds.js';
import { jobsSuite, sample, waitFor } from './helpers.js';

describe('the retention job', () => {
  const suite = jobsSuite();

  it('is not scheduled by a master without horizons', async () => {
    const id = await suite.h.run((tx) => insertMaster(tx));
    const master = await suite.jobs.start({ masterid: () => id, retention: retention.parse({}) });
    const schedulers = await suite.jobs.queue(QUEUES.retention).getJobSchedulers();
    expect(schedulers).toEqual([]);
    await master.stop();
  });

  it('deletes past the horizons once per period, and counts it in /metrics', async () => {
    const builderid = await suite.h.run((tx) => insertBuilder(tx));
    const old = await makeBuild(suite.h, builderid, { ageDays: 20, chunks: 4 });
    const gone = await makeBuild(suite.h, builderid, { ageDays: 100 });
    const recent = await makeBuild(suite.h, builderid, { ageDays: 1 });
    const running = await makeBuild(suite.h, builderid, { ageDays: 100, running: true });
    const id = await suite.h.run((tx) => insertMaster(tx));
    const master = await suite.jobs.start({
      masterid: () => id,
      retention: retention.parse({ period_seconds: 1, logHorizon: '7d', build_horizon: '90d' }),
    });
    const [scheduler] = await suite.jobs.queue(QUEUES.retention).getJobSchedulers();
    expect(scheduler?.key).toBe(RETENTION_SCHEDULER_ID);
    await waitFor('a run', async () => (await suite.jobs.completed(QUEUES.retention)) >= 1);
    const logs = await suite.h.db.pool.query(
      sql`SELECT l.id, l.type, (SELECT count(*)::int FROM logchunks c WHERE c.logid = l.id) AS chunks
          FROM logs l WHERE l.id = ANY(${[old.logid, gone.logid, recent.logid, running.logid]}::int[]) ORDER BY l.id`,
    );
    expect(logs).toEqual([
      { id: old.logid, type: 'd', chunks: 0 },
      { id: recent.logid, type: 's', chunks: 3 },
      { id: running.logid, type: 's', chunks: 3 },
    ]);
    const builds = await suite.h.db.pool.query(
      sql`SELECT id FROM builds WHERE builderid = ${builderid} ORDER BY id`,
    );
    expect(builds.map((r) => r.id)).toEqual([old.buildid, recent.buildid, running.buildid]);
    const text = await master.registry.getSingleMetricAsString('flotilla_retention_deleted_total');
    expect(sample(text, 'flotilla_retention_deleted_total', { kind: 'logs' })).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'flotilla_retention_deleted_total', { kind: 'builds' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'flotilla_retention_deleted_total', { kind: 'log_chunks' })).toBeGreaterThanOrEqual(
      7,
    );
    await master.stop();
    // The section removed from the configuration: the next master to start stops the cleanup.
    const after = await suite.jobs.start({ masterid: () => id, retention: retention.parse({}) });
    expect(await suite.jobs.queue(QUEUES.retention).getJobSchedulers()).toEqual([]);
    await after.stop();
  });
});
