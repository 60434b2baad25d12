// What happens to work when its worker or its master goes away: nothing acknowledged is
// lost, a build that could not finish ends RETRY, and its request runs again elsewhere.
import { afterEach, describe, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { waitFor } from '../helpers/processes.js';
import { Cluster } from './cluster.js';

let c: Cluster | undefined;
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

async function runningStep(c: Cluster, buildid: number, name: string): Promise<void> {
  await waitFor(`step ${name} of build ${buildid} to start`, async () => {
    const s = (await c.get(`/builds/${buildid}/steps?name=${name}`)).steps[0];
    return Boolean(s?.started_at);
  });
}

describe('a worker killed mid-build', () => {
  it('ends the build RETRY and runs the request again on another worker', async () => {
    c = await Cluster.start();
    const m = await c.startMaster('resilience-1');
    const w1 = await c.startWorker('w1', m);
    const [, brids] = await c.force('force-slow');
    const brid = Object.values(brids)[0]!;
    const first = await c.buildOf(brid);
    await runningStep(c, first.buildid, 'wait');
    // Only now does the other worker come: the request can run again only there.
    const w2 = await c.startWorker('w2', m);
    await w1.stop('SIGKILL');
    const done = await c.finished(first.buildid);
    expect(done.results).toBe(5);
    expect(done.state_string).toMatch(/^retry/);
    // The line the worker wrote before dying was acknowledged, so it is stored.
    const wait = (await c.get(`/builds/${first.buildid}/steps?name=wait`)).steps[0];
    expect(await c.text(`/steps/${wait.stepid}/logs/stdio/raw`)).toContain('started');
    let second: any;
    await waitFor('the request to run again', async () => {
      second = (await c!.get(`/buildrequests/${brid}/builds?order=buildid`)).builds[1];
      return second !== undefined;
    });
    expect(second.workerid).not.toBe(first.workerid);
    expect((await c.get(`/buildrequests/${brid}`)).buildrequests[0].complete).toBe(false);
    await c.rpc(`/builds/${second.buildid}`, 'stop', { reason: 'done testing' });
    expect((await c.finished(second.buildid)).results).toBe(6);
    await w2.stop();
  });
});

describe('a master stopped with SIGTERM mid-build', () => {
  it('hands the build back, leaves nothing claimed, and another master runs it', async () => {
    c = await Cluster.start();
    const m1 = await c.startMaster('leaving', { MASTER_DRAIN_SECONDS: '1' });
    await c.startWorker('w1', m1);
    const [, brids] = await c.force('force-slow');
    const brid = Object.values(brids)[0]!;
    const first = await c.buildOf(brid);
    await runningStep(c, first.buildid, 'wait');

    expect(await m1.proc.stop('SIGTERM', 90_000)).toBe(0);
    const done = await c.finished(first.buildid);
    expect(done.results).toBe(5);
    const [claims] = await c.db.pool.query(
      sql`SELECT count(*)::int AS n FROM buildrequest_claims WHERE brid = ${brid}`,
    );
    expect(claims.n).toBe(0);
    const master = (await c.get(`/masters?name=leaving`)).masters[0];
    expect(master.active).toBe(false);
    expect((await c.get(`/buildrequests/${brid}`)).buildrequests[0]).toMatchObject({
      claimed: false,
      complete: false,
    });

    const m2 = await c.startMaster('arriving');
    await c.startWorker('w2', m2);
    let second: any;
    await waitFor('another master to run it', async () => {
      second = (await c!.get(`/buildrequests/${brid}/builds?order=buildid`)).builds[1];
      return second !== undefined;
    });
    expect(second.masterid).toBe((await c.get(`/masters?name=arriving`)).masters[0].masterid);
    await c.rpc(`/builds/${second.buildid}`, 'stop', {});
    await c.finished(second.buildid);
  });
});
