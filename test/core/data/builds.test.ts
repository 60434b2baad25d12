// newBuild, setBuildStateString, finishBuild: rows, events (after commit only), numbering
// under concurrency, and the read API's agreement with what the events carry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endBuild, finishBuild, newBuild, setBuildStateString } from '../../../services/core/data/builds.js';
import { transact } from '../../../services/core/data/transaction.js';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { apiGet, barrier, buildParts, type Harness, insertBuilder, openHarness } from './harness.js';

let h: Harness;
let masterid: number;
let builderid: number;
let workerid: number;
let brid: number;

beforeAll(async () => {
  h = await openHarness();
  ({ masterid, builderid, workerid, brid } = await h.run(buildParts));
});
afterAll(async () => {
  await h?.close();
});

describe('newBuild', () => {
  it('numbers from 1, starts `starting`, and announces the build under its three keys', async () => {
    const builder = await h.run((tx) => insertBuilder(tx));
    await h.tap.clear();
    const b = await h.run((tx) =>
      newBuild(tx, { builderid: builder, buildrequestid: brid, workerid, masterid }),
    );
    expect(b.number).toBe(1);
    const [row] = await h.db.pool.query(sql`SELECT * FROM builds WHERE id = ${b.buildid}`);
    expect(row).toMatchObject({ number: 1, builderid: builder, buildrequestid: brid, workerid, masterid });
    expect(row.state_string).toBe('starting');
    expect(row.complete_at).toBeNull();
    expect(row.results).toBeNull();

    const events = await h.tap.events(
      `builders/${builder}/`,
      `builds/${b.buildid}/`,
      `workers/${workerid}/builds`,
    );
    expect(events.map((e) => e.k)).toEqual([
      `builders/${builder}/builds/1/new`,
      `builds/${b.buildid}/new`,
      `workers/${workerid}/builds/${b.buildid}/new`,
    ]);
    const [api] = await apiGet(h.db.pool, `builds/${b.buildid}`);
    for (const e of events) expect(e.m).toEqual(api);
    expect(api).toMatchObject({ complete: false, state_string: 'starting', properties: {} });
  });

  it('gives concurrent builds of one builder unique, consecutive numbers', async () => {
    const builder = await h.run((tx) => insertBuilder(tx));
    const other = await h.run((tx) => insertBuilder(tx));
    const n = 12;
    const together = barrier(n);
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        transact({ ...h.ctx, db: h.wide }, async (tx) => {
          await tx.q.query(sql`SELECT 1`);
          await together();
          return newBuild(tx, {
            builderid: i % 3 === 0 ? other : builder,
            buildrequestid: brid,
            workerid,
            masterid,
          });
        }),
      ),
    );
    const numbers = (id: number) =>
      results.filter((_, i) => (i % 3 === 0 ? other : builder) === id).map((r) => r.number);
    expect(numbers(builder).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(numbers(other).sort((a, b) => a - b)).toEqual([1, 2, 3, 4]);
    const [dups] = await h.db.pool.query(sql`
      SELECT count(*)::int AS n, count(DISTINCT (builderid, number))::int AS d FROM builds
      WHERE builderid IN (${builder}, ${other})`);
    expect(dups).toEqual({ n: 12, d: 12 });
  });

  it('continues after the highest number, whoever wrote it', async () => {
    const builder = await h.run((tx) => insertBuilder(tx));
    await h.db.pool.query(sql`INSERT INTO builds (number, builderid, buildrequestid, workerid, masterid, started_at,
                              state_string) VALUES (41, ${builder}, ${brid}, ${workerid}, ${masterid}, 1, 'x')`);
    const b = await h.run((tx) =>
      newBuild(tx, { builderid: builder, buildrequestid: brid, workerid, masterid }),
    );
    expect(b.number).toBe(42);
  });

  it('refuses a builder that does not exist', async () => {
    await expect(
      h.run((tx) => newBuild(tx, { builderid: -5, buildrequestid: brid, workerid, masterid })),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('events follow the commit', () => {
  it('publishes nothing while the transaction is open, and nothing at all when it rolls back', async () => {
    await h.tap.clear();
    let buildid = 0;
    await expect(
      h.run(async (tx) => {
        ({ buildid } = await newBuild(tx, { builderid, buildrequestid: brid, workerid, masterid }));
        await setBuildStateString(tx, buildid, 'compiling');
        expect(await h.tap.events(`builds/${buildid}/`)).toEqual([]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(buildid).toBeGreaterThan(0);
    expect(await h.tap.events(`builds/${buildid}/`)).toEqual([]);
    expect(await h.db.pool.query(sql`SELECT id FROM builds WHERE id = ${buildid}`)).toEqual([]);
  });

  it('publishes once committed, in the order the operations ran', async () => {
    await h.tap.clear();
    const buildid = await h.run(async (tx) => {
      const b = await newBuild(tx, { builderid, buildrequestid: brid, workerid, masterid });
      expect(await h.tap.events(`builds/${b.buildid}/`)).toEqual([]);
      await setBuildStateString(tx, b.buildid, 'compiling');
      return b.buildid;
    });
    expect(await h.tap.keys(`builds/${buildid}/`)).toEqual([
      `builds/${buildid}/new`,
      `builds/${buildid}/update`,
    ]);
  });
});

describe('setBuildStateString and finishBuild', () => {
  it('replace the state string, then finish once with the results', async () => {
    const b = await h.run((tx) => newBuild(tx, { builderid, buildrequestid: brid, workerid, masterid }));
    await h.tap.clear();
    await h.run((tx) => setBuildStateString(tx, b.buildid, 'building'));
    const [update] = await h.tap.events(`builds/${b.buildid}/update`);
    expect(update!.m).toMatchObject({ state_string: 'building', complete: false });

    const before = Math.floor(Date.now() / 1000);
    expect(await h.run((tx) => finishBuild(tx, b.buildid, Results.WARNINGS))).toBe(true);
    const [row] = await h.db.pool.query(sql`SELECT complete_at, results FROM builds WHERE id = ${b.buildid}`);
    expect(row.results).toBe(Results.WARNINGS);
    expect(row.complete_at).toBeGreaterThanOrEqual(before);
    const finished = await h.tap.events(`builders/${builderid}/builds/${b.number}/finished`);
    expect(finished).toHaveLength(1);
    expect(finished[0]!.m).toEqual((await apiGet(h.db.pool, `builds/${b.buildid}`))[0]);
    expect(finished[0]!.m).toMatchObject({ complete: true, results: Results.WARNINGS });

    await h.tap.clear();
    expect(await h.run((tx) => finishBuild(tx, b.buildid, Results.SUCCESS))).toBe(false);
    const [again] = await h.db.pool.query(sql`SELECT results FROM builds WHERE id = ${b.buildid}`);
    expect(again.results).toBe(Results.WARNINGS);
    expect(await h.tap.events(`builds/${b.buildid}/`)).toEqual([]);
  });

  it('in one write (endBuild) make the row and the events of the two calls', async () => {
    // run-build.ts ends a build with endBuild: a statement and its triggers fewer
    // (load/results/fleet.md, 2026-11-29 00:40).
    const shape = (id: number) => h.tap.shapes(`builds/${id}/`, ['buildid', 'number', 'buildrequestid']);
    const [a, b] = await h.run(async (tx) => [
      await newBuild(tx, { builderid, buildrequestid: brid, workerid, masterid }),
      await newBuild(tx, { builderid, buildrequestid: brid, workerid, masterid }),
    ]);
    await h.tap.clear();
    await h.run(async (tx) => {
      await setBuildStateString(tx, a!.buildid, 'build successful');
      await finishBuild(tx, a!.buildid, Results.SUCCESS);
    });
    expect(await h.run((tx) => endBuild(tx, b!.buildid, 'build successful', Results.SUCCESS))).toBe(true);
    // Ended already: the state string alone, as the two calls leave it.
    expect(await h.run((tx) => endBuild(tx, b!.buildid, 'again', Results.FAILURE))).toBe(false);
    const events = await shape(b!.buildid);
    expect(events.map((e) => e.k)).toEqual(['update', 'finished', 'update']);
    expect(events.slice(0, 2)).toEqual(await shape(a!.buildid));
    const [row] = await h.db.pool.query(
      sql`SELECT state_string, results FROM builds WHERE id = ${b!.buildid}`,
    );
    expect(row).toEqual({ state_string: 'again', results: Results.SUCCESS });
    await expect(h.run((tx) => endBuild(tx, -1, 'x', 0))).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('answer NOT_FOUND for a build that does not exist', async () => {
    await expect(h.run((tx) => setBuildStateString(tx, -1, 'x'))).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await expect(h.run((tx) => finishBuild(tx, -1, 0))).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
