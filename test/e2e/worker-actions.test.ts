// Buildbot 3.7's worker actions through JSON-RPC, on real processes: pause holds new builds
// back and unpause lets them run; a graceful stop lets the running build finish, then the
// worker disconnects and its process exits; kill ends the worker at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { Results } from '../../services/core/results.js';
import type { Running } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { Cluster, type MasterProc } from './cluster.js';

let c: Cluster;
let m: MasterProc;
let w1: Running;
let w2: Running;
const ids: Record<string, number> = {};
beforeAll(async () => {
  c = await Cluster.start();
  m = await c.startMaster('m1');
  w1 = await c.startWorker('w1', m);
  w2 = await c.startWorker('w2', m);
  for (const w of (await c.get('/workers')).workers) ids[w.name] = w.workerid;
});
afterAll(async () => {
  await c?.stop();
});

const worker = async (name: string) => (await c.get(`/workers/${ids[name]}`)).workers[0];

describe('worker actions', () => {
  it('pause keeps new builds off the worker; unpause lets them run', async () => {
    expect(await c.rpc(`/workers/${ids.w1}`, 'pause', { reason: 'maintenance' })).toBeNull();
    await waitFor('w1 to be paused', async () => (await worker('w1')).paused === true);
    expect((await worker('w1')).graceful).toBe(false);

    // basic runs only on w1: its request waits while w1 is paused.
    const [, brids] = await c.force('force-basic');
    const brid = Object.values(brids)[0]!;
    // The master has heard of the request and looked for work since.
    await c.settled(m);
    expect((await c.get(`/buildrequests/${brid}`)).buildrequests[0].claimed).toBe(false);
    expect((await c.get(`/buildrequests/${brid}/builds`)).builds).toHaveLength(0);

    await c.rpc(`/workers/${ids.w1}`, 'unpause');
    const build = await c.buildOf(brid);
    expect(build.workerid).toBe(ids.w1);
    // basic ends WARNINGS by design (its lint step warns).
    expect((await c.finished(build.buildid)).results).toBe(Results.WARNINGS);
    expect((await worker('w1')).paused).toBe(false);
  });

  it('a graceful stop lets the running build finish, then the worker exits', async () => {
    // With w1 paused, the slow build lands on w2.
    await c.rpc(`/workers/${ids.w1}`, 'pause');
    await waitFor('w1 to be paused', async () => (await worker('w1')).paused === true);
    const [, brids] = await c.force('force-slow');
    const build = await c.buildOf(Object.values(brids)[0]!);
    expect(build.workerid).toBe(ids.w2);

    await c.rpc(`/workers/${ids.w2}`, 'stop', { reason: 'draining' });
    await waitFor('w2 to be graceful', async () => (await worker('w2')).graceful === true);
    // Still connected and still building: a graceful stop does not interrupt.
    await c.settled(m);
    expect(w2.child.exitCode).toBeNull();
    expect((await worker('w2')).connected_to).toHaveLength(1);
    expect((await c.get(`/builds/${build.buildid}`)).builds[0].complete).toBe(false);

    await c.rpc(`/builds/${build.buildid}`, 'stop', { reason: 'enough' });
    expect((await c.finished(build.buildid)).results).toBe(Results.CANCELLED);
    await waitFor('w2 to exit', async () => w2.child.exitCode !== null);
    expect(await w2.exited).toBe(0);
    await waitFor('w2 to be disconnected', async () => (await worker('w2')).connected_to.length === 0);
  });

  it('kill disconnects the worker at once and its process exits', async () => {
    expect((await worker('w1')).connected_to).toHaveLength(1);
    await c.rpc(`/workers/${ids.w1}`, 'kill', { reason: 'gone' });
    await waitFor('w1 to exit', async () => w1.child.exitCode !== null);
    expect(await w1.exited).toBe(0);
    await waitFor('w1 to be disconnected', async () => (await worker('w1')).connected_to.length === 0);
    const [row] = await c.db.pool.query(sql`SELECT count(*)::int AS n FROM connected_workers`);
    expect(row.n).toBe(0);
  });

  it('an unknown action is refused as Buildbot refuses it', async () => {
    const res = await fetch(`${c.api.base}/workers/${ids.w1}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'explode', id: 1, params: {} }),
    });
    const body = (await res.json()) as { error: { code: number; message: string } };
    expect(res.status).toBe(501);
    expect(body.error.message).toMatch(/explode/);
  });
});
