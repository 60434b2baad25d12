// A lock held by a master killed with SIGKILL is freed by that master's expiry: a build on
// another master waiting for it gets it then, and not before (the dead master's build is
// not known to be dead until its master is expired).
//
// And a worker runs at most max_builds builds, also when one distribution pass finds
// requests of several builders it serves at once: a slot is taken from the moment a build is
// handed to the worker, not from when its row is written.
//
// Both are limits on what runs at once, and share one cluster (issue 29 §5: each had a
// cluster of its own for one `it`). Neither uses the other's builders, workers or masters:
// the slots test has a worker with one slot (solo) serving two builders of its own, on a
// master of its own, so either test may run first and the lock test's kill touches nothing
// of it. What sharing saves: worker-metrics.test.ts's header.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockHolders } from '../../services/core/data/index.js';
import { sql } from '../../services/core/db/pool.js';
import { waitFor } from '../helpers/wait.js';
import { Cluster, type MasterProc } from './cluster.js';

// The shortest expiry that master.yaml's worker_silence_seconds (4) allows: a frozen master's
// commands must have been killed before it is expired (services/master/liveness.ts).
const EXPIRY_SECONDS = 10;

let c: Cluster;
let m1: MasterProc;
beforeAll(async () => {
  c = await Cluster.start({
    config: {
      master_expiry_seconds: EXPIRY_SECONDS,
      workers: [
        // One build at a time on w1, so that the second build is m2's.
        { name: 'w1', max_builds: 1 },
        { name: 'one-slot', password: 'q', max_builds: 1 },
      ],
      locks: [{ name: 'solo', type: 'master' }],
      builders: [
        {
          name: 'locked',
          workers: ['w1', 'w2'],
          locks: [{ lock: 'solo', mode: 'exclusive' }],
          steps: [{ type: 'shell', name: 'hold', command: 'echo holding; sleep 120' }],
        },
        {
          name: 'slot-quick',
          workers: ['one-slot'],
          steps: [{ type: 'shell', name: 'quick', command: 'echo quick' }],
        },
        {
          name: 'slot-slow',
          workers: ['one-slot'],
          steps: [{ type: 'shell', name: 'wait', command: 'echo started; sleep 60' }],
        },
      ],
      force_schedulers: [
        { name: 'force-locked', builders: ['locked'] },
        { name: 'force-pair', builders: ['slot-quick', 'slot-slow'] },
      ],
    },
  });
  m1 = await c.startMaster('m1');
  await c.startWorker('w1', m1);
}, 120_000);
afterAll(async () => {
  await c?.stop();
});

const masterId = async (name: string) => (await c.get(`/masters?name=${name}`)).masters[0].masterid as number;

describe('a lock held by a master killed with SIGKILL', () => {
  it('is freed by its expiry, and the build waiting for it on another master runs then', async () => {
    const [, first] = await c.force('force-locked');
    const a = await c.buildOf(Object.values(first)[0]!);
    const m1id = await masterId('m1');
    await waitFor('the first build to hold the lock', async () => {
      const steps = (await c.get(`/builds/${a.buildid}/steps`)).steps;
      return steps.some((s: any) => s.name === 'hold' && s.started_at !== null);
    });
    expect((await lockHolders(c.db.pool, 'solo')).map((h) => h.masterid)).toEqual([m1id]);

    const m2 = await c.startMaster('m2');
    await c.startWorker('w2', m2);
    const m2id = await masterId('m2');
    const [, second] = await c.force('force-locked');
    const b = await c.buildOf(Object.values(second)[0]!);
    expect(b.masterid).toBe(m2id);
    await waitFor('the second build to wait for the lock', async () => {
      return (await c.get(`/builds/${b.buildid}`)).builds[0].state_string === 'acquiring locks';
    });

    await m1.proc.stop('SIGKILL');
    const deadline = EXPIRY_SECONDS * 1000 * 5;
    await waitFor(
      'the second build to get the lock',
      async () => {
        const steps = (await c.get(`/builds/${b.buildid}/steps`)).steps;
        return steps.some((s: any) => s.name === 'hold' && s.started_at !== null);
      },
      { timeoutMs: deadline },
    );
    // Not before m1 was expired: its silence alone proves nothing for EXPIRY_SECONDS. Read
    // from the times the cluster recorded (whole seconds), not the test's clock.
    const dead = (await c.get(`/masters/${m1id}`)).masters[0];
    expect(dead.active).toBe(false);
    const held = (await c.get(`/builds/${b.buildid}/steps`)).steps.find((s: any) => s.name === 'hold');
    expect(held.started_at).toBeGreaterThanOrEqual(dead.last_active + EXPIRY_SECONDS - 1);
    const holders = await lockHolders(c.db.pool, 'solo');
    expect(holders.map((h) => [h.masterid, h.holder])).toEqual([[m2id, `build ${b.buildid}`]]);
  }, 180_000);
});

describe('a worker with one slot', () => {
  it('never runs two builds at once, though requests of two builders it serves are pending together', async () => {
    const master = await c.startMaster('slots-master');
    await c.startWorker('one-slot', master);
    const [, brids] = await c.force('force-pair');
    expect(Object.keys(brids)).toHaveLength(2);
    const [worker] = await c.db.pool.query(sql`SELECT id FROM workers WHERE name = 'one-slot'`);
    // Until the first build finishes and the second starts, sample how many run on it.
    let most = 0;
    let builds = 0;
    await waitFor(
      'both builds on one-slot',
      async () => {
        const [r] = await c.db.pool.query(sql`
        SELECT count(*) FILTER (WHERE complete_at IS NULL)::int AS running, count(*)::int AS builds
        FROM builds WHERE workerid = ${worker.id}`);
        most = Math.max(most, r.running);
        builds = r.builds;
        return builds >= 2;
      },
      { gaveUp: c.noMaster },
    );
    expect(builds).toBe(2);
    expect(most).toBe(1);
    // The quick build finished before the slow one started.
    const rows = await c.db.pool.query(sql`
      SELECT b.id, b.complete_at, bl.name FROM builds b JOIN builders bl ON bl.id = b.builderid
      WHERE b.workerid = ${worker.id} ORDER BY b.id`);
    expect(rows.map((r) => r.name).sort()).toEqual(['slot-quick', 'slot-slow']);
    const slow = rows.find((r) => r.name === 'slot-slow')!;
    await c.rpc(`/builds/${slow.id}`, 'stop', { reason: 'done with the test' });
    await c.finished(slow.id);
  });
});
