// masterActive, masterStopped, expireMasters. The expiry runs end to end on the oracle's
// fixture, where master 1 (a real Buildbot's) owns every scheduler, the change source, all
// builders and two connected workers: its unfinished build ends RETRY with its steps and logs,
// its claims go (looked up by ITS id, not the caller's), and everything it held is released.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimBuildRequests } from '../../../services/core/data/buildrequests.js';
import { newBuild } from '../../../services/core/data/builds.js';
import { trySetChangeSourceMaster } from '../../../services/core/data/changesources.js';
import { addLog, appendLog, finishLog } from '../../../services/core/data/logs.js';
import { expireMasters, masterActive, masterStopped } from '../../../services/core/data/masters.js';
import { trySetSchedulerMaster } from '../../../services/core/data/schedulers.js';
import { finishStep, newStep, startStep } from '../../../services/core/data/steps.js';
import { transact } from '../../../services/core/data/transaction.js';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { apiGet, barrier, type Harness, openHarness, pendingRequests, uniq } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await openHarness('fixture');
});
afterAll(async () => {
  await h?.close();
});

const nowSeconds = () => Math.floor(Date.now() / 1000);
const count = async (query: ReturnType<typeof sql>) => (await h.db.pool.query(query))[0].n as number;

describe('masterActive', () => {
  it('creates a master by name, announces `started` once, and renews last_active on each heartbeat', async () => {
    const name = uniq('host:/srv/master');
    await h.tap.clear();
    const id = await h.run((tx) => masterActive(tx, name));
    const [row] = await h.db.pool.query(sql`SELECT * FROM masters WHERE id = ${id}`);
    expect(row).toMatchObject({ name, active: 1 });
    expect(row.last_active).toBeGreaterThanOrEqual(nowSeconds() - 2);
    await h.db.pool.query(sql`UPDATE masters SET last_active = 5 WHERE id = ${id}`);
    expect(await h.run((tx) => masterActive(tx, name))).toBe(id);
    const [again] = await h.db.pool.query(sql`SELECT last_active FROM masters WHERE id = ${id}`);
    expect(again.last_active).toBeGreaterThan(5);
    const events = await h.tap.events(`masters/${id}/`);
    expect(events).toEqual([{ k: `masters/${id}/started`, m: { masterid: id, name, active: true } }]);
    expect((await apiGet(h.db.pool, `masters/${id}`))[0]).toMatchObject({ masterid: id, name, active: true });
  });

  it('finds the row a Buildbot master created (same name_hash)', async () => {
    expect(await h.run((tx) => masterActive(tx, 'vm:/srv/oracle/run/master'))).toBe(1);
  });
});

describe('masterStopped', () => {
  it('deactivates at once, releases what the master held, and announces `stopped` once', async () => {
    const name = uniq('stopping');
    const id = await h.run((tx) => masterActive(tx, name));
    const sched =
      await h.db.pool.query(sql`INSERT INTO schedulers (name, name_hash) VALUES (${name}, md5(${name}))
                                           RETURNING id`);
    expect(await h.run((tx) => trySetSchedulerMaster(tx, sched[0].id, id))).toBe(true);
    await h.tap.clear();
    expect(await h.run((tx) => masterStopped(tx, id))).toBe(true);
    expect(await h.run((tx) => masterStopped(tx, id))).toBe(false);
    expect(await count(sql`SELECT count(*)::int AS n FROM scheduler_masters WHERE masterid = ${id}`)).toBe(0);
    expect(await h.tap.events(`masters/${id}/`)).toEqual([
      { k: `masters/${id}/stopped`, m: { masterid: id, name, active: false } },
    ]);
    await expect(h.run((tx) => masterStopped(tx, -1))).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('expireMasters on the fixture', () => {
  let caller: number;
  let build: { buildid: number; number: number };
  let steps: { done: number; running: number; pending: number };
  let logs: { open: number; closed: number };
  let deadClaim: number;
  let callerClaim: number;
  let before: { completeClaims: number; builderMasters: number };

  beforeAll(async () => {
    caller = await h.run((tx) => masterActive(tx, uniq('caller')));
    await h.db.pool.query(
      sql`UPDATE masters SET active = 1, last_active = ${nowSeconds() - 3600} WHERE id = 1`,
    );
    await h.run(async (tx) => {
      [deadClaim, callerClaim] = (await pendingRequests(tx, 1, 2)) as [number, number];
      expect(await claimBuildRequests(tx, [deadClaim], 1)).toBe(true);
      expect(await claimBuildRequests(tx, [callerClaim], caller)).toBe(true);
      build = await newBuild(tx, { builderid: 1, buildrequestid: deadClaim, workerid: 2, masterid: 1 });
      const done = (await newStep(tx, build.buildid, 'checkout')).stepid;
      await startStep(tx, done);
      await finishStep(tx, done, Results.SUCCESS);
      const running = (await newStep(tx, build.buildid, 'compile')).stepid;
      await startStep(tx, running);
      const closed = await addLog(tx, running, 'stdio', 's');
      await appendLog(tx, closed, 'oall good\n');
      await finishLog(tx, closed);
      const open = await addLog(tx, running, 'warnings', 't');
      await appendLog(tx, open, 'half a\n');
      const pending = (await newStep(tx, build.buildid, 'test')).stepid;
      steps = { done, running, pending };
      logs = { open, closed };
    });
    before = {
      completeClaims: await count(sql`SELECT count(*)::int AS n FROM buildrequest_claims c
                                      JOIN buildrequests br ON br.id = c.brid WHERE c.masterid = 1 AND br.complete = 1`),
      builderMasters: await count(sql`SELECT count(*)::int AS n FROM builder_masters WHERE masterid = 1`),
    };
    expect(before.completeClaims).toBeGreaterThan(0);
    expect(before.builderMasters).toBe(5);
  });

  it('expires the silent master only, never the caller or a master that checked in', async () => {
    await h.db.pool.query(sql`UPDATE masters SET last_active = 0 WHERE id = ${caller}`);
    const fresh = await h.run((tx) => masterActive(tx, uniq('fresh')));
    await h.tap.clear();
    const expired = await h.run((tx) => expireMasters(tx, 600, caller));
    expect(expired).toEqual([1]);
    const active = await h.db.pool.query(
      sql`SELECT id, active FROM masters WHERE id IN (1, ${caller}, ${fresh}) ORDER BY id`,
    );
    expect(active.map((r) => r.active)).toEqual([0, 1, 1]);
  });

  it('ends its unfinished build RETRY, finishing the logs and steps that were still open', async () => {
    const [b] = await apiGet(h.db.pool, `builds/${build.buildid}`);
    expect(b).toMatchObject({
      complete: true,
      results: Results.RETRY,
      state_string: 'retry (master vm:/srv/oracle/run/master was lost)',
    });
    const st = await apiGet(h.db.pool, `builds/${build.buildid}/steps`);
    expect(st.map((s) => [s.name, s.complete, s.results, s.hidden])).toEqual([
      ['checkout', true, Results.SUCCESS, false],
      ['compile', true, Results.RETRY, false],
      ['test', true, Results.RETRY, false],
    ]);
    const lg = await apiGet(h.db.pool, `steps/${steps.running}/logs`);
    expect(lg.map((l) => [l.logid, l.complete])).toEqual([
      [logs.closed, true],
      [logs.open, true],
    ]);
    // This build's logs only: other suites publish on the same Redis at the same time (a
    // concurrent run once saw another suite's `logs/<id>/append` here).
    const keys = await h.tap.keys(
      `logs/${logs.open}/`,
      `logs/${logs.closed}/`,
      `steps/${steps.running}/finished`,
      `steps/${steps.pending}/`,
      `builds/${build.buildid}/finished`,
    );
    expect(keys).toEqual([
      `logs/${logs.open}/finished`,
      `steps/${steps.running}/finished`,
      `steps/${steps.pending}/finished`,
      `builds/${build.buildid}/finished`,
    ]);
  });

  it("removes the dead master's claims on incomplete requests (by its id), and no one else's", async () => {
    const claims = await h.db.pool.query(
      sql`SELECT brid, masterid FROM buildrequest_claims WHERE brid IN (${deadClaim}, ${callerClaim}) ORDER BY brid`,
    );
    expect(claims).toEqual([{ brid: callerClaim, masterid: caller }]);
    expect(
      await count(sql`SELECT count(*)::int AS n FROM buildrequest_claims c
                      JOIN buildrequests br ON br.id = c.brid WHERE c.masterid = 1 AND br.complete = 1`),
    ).toBe(before.completeClaims);
    expect(await h.tap.keys(`buildrequests/${deadClaim}/`, `buildrequests/${callerClaim}/`)).toEqual([
      `buildrequests/${deadClaim}/unclaimed`,
    ]);
    const [br] = await apiGet(h.db.pool, `buildrequests/${deadClaim}`);
    expect(br).toMatchObject({ claimed: false, complete: false });
  });

  it('releases its schedulers, change source, builders and connected workers', async () => {
    expect(await count(sql`SELECT count(*)::int AS n FROM scheduler_masters WHERE masterid = 1`)).toBe(0);
    expect(await count(sql`SELECT count(*)::int AS n FROM changesource_masters WHERE masterid = 1`)).toBe(0);
    expect(await count(sql`SELECT count(*)::int AS n FROM builder_masters WHERE masterid = 1`)).toBe(0);
    expect(await count(sql`SELECT count(*)::int AS n FROM connected_workers WHERE masterid = 1`)).toBe(0);
    expect(await count(sql`SELECT count(*)::int AS n FROM configured_workers`)).toBe(0);
    expect((await apiGet(h.db.pool, 'schedulers/1'))[0]).toMatchObject({ master: null });
    expect((await apiGet(h.db.pool, 'workers/2'))[0]).toMatchObject({ connected_to: [], configured_on: [] });
    expect((await apiGet(h.db.pool, 'builders/1'))[0]).toMatchObject({ masterids: [] });
    expect((await apiGet(h.db.pool, 'masters/1'))[0]).toMatchObject({ active: false });

    const stopped = await h.tap.events('builders/', 'workers/', 'masters/1/');
    const ofBuilders = stopped.filter((e) => /^builders\/\d+\/stopped$/.test(e.k));
    expect(ofBuilders.map((e) => e.m)).toEqual(
      [1, 2, 3, 4, 5].map((id) => ({ builderid: id, masterid: 1, name: expect.any(String) })),
    );
    expect(stopped.filter((e) => e.k.endsWith('/disconnected')).map((e) => e.k)).toEqual([
      'workers/2/disconnected',
      'workers/3/disconnected',
    ]);
    expect(stopped.filter((e) => e.k.startsWith('masters/1/'))).toEqual([
      { k: 'masters/1/stopped', m: { masterid: 1, name: 'vm:/srv/oracle/run/master', active: false } },
    ]);

    // Another master can take them over now.
    expect(await h.run((tx) => trySetSchedulerMaster(tx, 1, caller))).toBe(true);
    expect(await h.run((tx) => trySetChangeSourceMaster(tx, 1, caller))).toBe(true);
  });

  it('does nothing the second time', async () => {
    await h.tap.clear();
    expect(await h.run((tx) => expireMasters(tx, 600, caller))).toEqual([]);
    expect(await h.tap.events('masters/1/', 'workers/2/', 'workers/3/', `builds/${build.buildid}/`)).toEqual(
      [],
    );
  });

  it('forceHousekeeping cleans up after a master that Buildbot marked inactive and left claimed', async () => {
    const ghost = await h.run((tx) => masterActive(tx, uniq('ghost')));
    const [brid] = (await h.run((tx) => pendingRequests(tx, 1, 1))) as [number];
    await h.run((tx) => claimBuildRequests(tx, [brid], ghost));
    await h.db.pool.query(sql`UPDATE masters SET active = 0, last_active = 1 WHERE id = ${ghost}`);
    expect(await h.run((tx) => expireMasters(tx, 600, caller))).toEqual([]);
    expect(await count(sql`SELECT count(*)::int AS n FROM buildrequest_claims WHERE brid = ${brid}`)).toBe(1);
    await h.run((tx) => expireMasters(tx, 600, caller, { forceHousekeeping: true }));
    expect(await count(sql`SELECT count(*)::int AS n FROM buildrequest_claims WHERE brid = ${brid}`)).toBe(0);
  });
});

describe('concurrent expiry', () => {
  it('two masters expiring the same dead master at once do its housekeeping once', async () => {
    for (let round = 0; round < 5; round++) {
      const dead = await h.run((tx) => masterActive(tx, uniq('dead')));
      const [brid] = (await h.run((tx) => pendingRequests(tx, 2, 1))) as [number];
      await h.run((tx) => claimBuildRequests(tx, [brid], dead));
      await h.db.pool.query(sql`UPDATE masters SET last_active = 1 WHERE id = ${dead}`);
      const a = await h.run((tx) => masterActive(tx, uniq('a')));
      const b = await h.run((tx) => masterActive(tx, uniq('b')));
      await h.tap.clear();
      const together = barrier(2);
      const results = await Promise.all(
        [a, b].map((by) =>
          transact({ ...h.ctx, db: h.wide }, async (tx) => {
            await together();
            return expireMasters(tx, 600, by);
          }),
        ),
      );
      expect(results.flat().filter((id) => id === dead)).toEqual([dead]);
      expect(await h.tap.keys(`masters/${dead}/`, `buildrequests/${brid}/`)).toEqual([
        `buildrequests/${brid}/unclaimed`,
        `masters/${dead}/stopped`,
      ]);
    }
  });
});
