// A worker runs at most max_builds builds, also when one distribution pass finds requests of
// several builders it serves at once: a slot is taken from the moment a build is handed to
// the worker, not from when its row is written.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { waitFor } from '../helpers/wait.js';
import { Cluster } from './cluster.js';

let c: Cluster;
beforeAll(async () => {
  c = await Cluster.start({
    // w1 alone serves basic and slow here (w2 never connects), with one slot.
    configure: (yaml) => {
      const one = yaml.replace(
        '{ name: w1, password_env: W1_PASSWORD, max_builds: 2,',
        '{ name: w1, password_env: W1_PASSWORD, max_builds: 1,',
      );
      expect(one).not.toBe(yaml);
      return `${one.trimEnd()}\n  - { name: force-pair, builders: [basic, slow] }\n`;
    },
  });
  const master = await c.startMaster('slots-master');
  await c.startWorker('w1', master);
});
afterAll(async () => {
  await c?.stop();
});

it('never runs two builds at once on a worker with one slot, though both requests are pending together', async () => {
  const [, brids] = await c.force('force-pair');
  expect(Object.keys(brids)).toHaveLength(2);
  const [w1] = await c.db.pool.query(sql`SELECT id FROM workers WHERE name = 'w1'`);
  // Until the first build finishes and the second starts, sample how many run on w1.
  let most = 0;
  let builds = 0;
  await waitFor('both builds', async () => {
    const [r] = await c.db.pool.query(sql`
      SELECT count(*) FILTER (WHERE complete_at IS NULL)::int AS running, count(*)::int AS builds
      FROM builds WHERE workerid = ${w1.id}`);
    most = Math.max(most, r.running);
    builds = r.builds;
    return builds >= 2;
  });
  expect(builds).toBe(2);
  expect(most).toBe(1);
  // The basic build finished before the slow one started.
  const rows = await c.db.pool.query(sql`
    SELECT b.id, b.complete_at, bl.name FROM builds b JOIN builders bl ON bl.id = b.builderid
    WHERE b.workerid = ${w1.id} ORDER BY b.id`);
  expect(rows.map((r) => r.name).sort()).toEqual(['basic', 'slow']);
  const slow = rows.find((r) => r.name === 'slow')!;
  await c.rpc(`/builds/${slow.id}`, 'stop', { reason: 'done with the test' });
  await c.finished(slow.id);
});
