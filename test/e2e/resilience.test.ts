// What happens to work when its worker or its master goes away: nothing acknowledged is
// lost, a build that could not finish ends RETRY, and its request runs again elsewhere. And
// what an API that stops in the middle of a write leaves behind: no lock for long.
import { afterEach, describe, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { waitFor } from '../helpers/wait.js';
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

describe('an API frozen (SIGSTOP) inside a write transaction', () => {
  it('has that transaction ended by the server, so that the request it locked can be claimed again', async () => {
    // One client writes as fast as it can: no rate limit in the way.
    c = await Cluster.start({ config: { www: { rate_limit: { enabled: false } } } });
    // A master with no worker registers the builders and claims nothing: a pending request,
    // whose priority the API is then told to change again and again, each change a
    // transaction that locks the request's row.
    await c.startMaster('no-workers');
    const [, brids] = await c.force('force-basic');
    const brid = Object.values(brids)[0]!;
    // The lock a master's claim takes on the request (claimBuildRequests, FOR NO KEY UPDATE),
    // asked for without waiting: a claim would wait for it, and its master's claim pass too.
    const claimable = async () =>
      (
        await c!.db.pool.query(
          sql`SELECT id FROM buildrequests WHERE id = ${brid} FOR NO KEY UPDATE SKIP LOCKED`,
        )
      ).length === 1;
    const apiInWrite = async () => {
      const [r] = await c!.db.pool.query(sql`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'flotilla-api'
          AND state = 'idle in transaction' AND backend_xid IS NOT NULL`);
      return r.n > 0;
    };
    const pid = c.api.proc.pid;
    let writing = true;
    const writer = (async () => {
      for (let p = 1; writing; p++)
        await c!.rpc(`/buildrequests/${brid}`, 'set_priority', { priority: p }).catch(() => undefined);
    })();
    try {
      // Stopped, and continued again at once unless it is caught inside a write (the way
      // load/chaos/scenarios.ts freezes a master inside one).
      for (let tries = 1; ; tries++) {
        process.kill(pid, 'SIGSTOP');
        if ((await apiInWrite()) && !(await claimable())) break;
        process.kill(pid, 'SIGCONT');
        if (tries === 2000) throw new Error('the API was not caught inside a write in 2000 tries');
        // Let it run on for a round trip.
        await c.db.pool.query(sql`SELECT 1`);
      }
      // Frozen with the row locked: no master could claim the request. The server must end
      // the session (idle_in_transaction_session_timeout, services/api/service.ts), and with it
      // the lock, while the API is still frozen.
      await waitFor(
        "the frozen API's transactions ended",
        async () => (await claimable()) && !(await apiInWrite()),
      );
    } finally {
      writing = false;
      process.kill(pid, 'SIGCONT');
      await writer;
    }
    // Continued, it writes again, on a connection of its pool that the server did not end.
    await c.rpc(`/buildrequests/${brid}`, 'set_priority', { priority: -1 });
    expect((await c.get(`/buildrequests/${brid}`)).buildrequests[0].priority).toBe(-1);
  });
});
