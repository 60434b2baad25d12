// A build's start reads its first properties' facts in one statement (buildStartFacts) and
// writes them in one (addNewBuildProperties), where it took four reads and three statements,
// and checks its claim in its row's INSERT (newBuild's claimedBy), where it read the fence
// after it (load/results/fleet.md, 2026-11-29, phase S). Each must stay what it stands in for
// (the reads each part's own statement makes alone, the JSON of one statement against their rows):
// checked on the fixture, whose build sets, changes and properties a real Buildbot wrote.
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  addNewBuildProperties,
  buildProjectQuery,
  buildStartFacts,
  buildsetChangeAuthors,
  buildsetMainSourceStamp,
  claimBuildRequests,
  getBuildsetProperties,
  newBuild,
  setBuildProperties,
} from '../../../services/core/data/index.js';
import { sql } from '../../../services/core/db/pool.js';
import { buildParts, counted, type Harness, insertMaster, openHarness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await openHarness('fixture');
});
afterAll(async () => {
  await h?.close();
});

it("reads in one statement what the four reads of a build's facts read, for every build of the fixture", async () => {
  const builds = await h.db.pool.query(sql`
    SELECT b.id AS buildid, br.buildsetid AS bsid FROM builds b JOIN buildrequests br ON br.id = b.buildrequestid
    ORDER BY b.id`);
  expect(builds.length).toBeGreaterThan(3);
  let withProperties = 0;
  for (const { buildid, bsid } of builds) {
    const q = h.db.pool;
    const c = await h.run(async (tx) => {
      const c = counted(tx);
      return { facts: await buildStartFacts(c.tx.q, buildid, bsid), statements: c.statements() };
    });
    expect(c.statements).toBe(1);
    expect(c.facts).toEqual({
      buildsetProperties: await getBuildsetProperties(q, bsid),
      project: (await q.query(buildProjectQuery(buildid)))[0] ?? null,
      sourcestamp: (await buildsetMainSourceStamp(q, bsid)) ?? null,
      authors: await buildsetChangeAuthors(q, bsid),
    });
    if (Object.keys(c.facts.buildsetProperties).length > 0) withProperties++;
  }
  // The comparison is about something: some build sets of the fixture carry properties.
  expect(withProperties).toBeGreaterThan(0);
});

it("writes a new build's properties in one statement, stored and announced as setBuildProperties does", async () => {
  const [from] = await h.db.pool.query(
    sql`SELECT builderid, buildrequestid, masterid FROM builds ORDER BY id LIMIT 1`,
  );
  const props = {
    buildername: ['b', 'Builder'],
    owners: [['a <a@example.invalid>'], 'Build'],
    matrix: [{ os: ['linux'], n: 2, none: null, gone: undefined }, 'Test'],
    branch: [null, 'Build'],
  } as const;
  const write = async (how: 'new' | 'set') =>
    h.run(async (tx) => {
      const b = await newBuild(tx, {
        builderid: from.builderid,
        buildrequestid: from.buildrequestid,
        masterid: from.masterid,
        workerid: null,
      });
      const c = counted(tx);
      const out =
        how === 'new'
          ? await addNewBuildProperties(c.tx, b.buildid, props)
          : await setBuildProperties(c.tx, b.buildid, props);
      return { buildid: b.buildid, out, statements: c.statements() };
    });
  await h.tap.clear();
  const added = await write('new');
  const set = await write('set');
  expect(added.statements).toBe(1);
  expect(set.statements).toBe(3);
  expect(added.out).toEqual(set.out);
  const rows = (buildid: number) =>
    h.db.pool.query(
      sql`SELECT name, value, source FROM build_properties WHERE buildid = ${buildid} ORDER BY name`,
    );
  expect(await rows(added.buildid)).toEqual(await rows(set.buildid));
  expect((await rows(added.buildid)).length).toBe(4);
  const key = (id: number) => `builds/${id}/properties/update`;
  const [a] = await h.tap.events(key(added.buildid));
  const [s] = await h.tap.events(key(set.buildid));
  expect(a).toBeDefined();
  expect((a as { m: unknown }).m).toEqual((s as { m: unknown }).m);
});

it("writes a build's row only while the master holds its request's claim, in the INSERT itself", async () => {
  const parts = await h.run((tx) => buildParts(tx));
  const other = await h.run((tx) => insertMaster(tx));
  const start = (masterid: number) =>
    h.run(async (tx) => {
      const c = counted(tx);
      const b = await newBuild(c.tx, {
        builderid: parts.builderid,
        buildrequestid: parts.brid,
        workerid: parts.workerid,
        masterid,
        claimedBy: masterid,
      });
      return { b, statements: c.statements() };
    });
  const rows = () => h.db.pool.query(sql`SELECT id FROM builds WHERE buildrequestid = ${parts.brid}`);
  // Nobody holds it yet: nothing written.
  expect((await start(parts.masterid)).b).toBeNull();
  await h.run((tx) => claimBuildRequests(tx, [parts.brid], other));
  // Another master holds it: nothing written either.
  expect((await start(parts.masterid)).b).toBeNull();
  expect(await rows()).toEqual([]);
  // The holder's start: the builder's lock and the INSERT, no read of the claim after it.
  const held = await start(other);
  expect(held.b).toMatchObject({ number: 1 });
  expect(held.statements).toBe(2);
  expect(await rows()).toEqual([{ id: held.b!.buildid }]);
});
