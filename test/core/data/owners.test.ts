// What authorization reads of the data (core/data/owners.ts, builders.ts), checked on every
// row a real Buildbot wrote into the oracle's fixture against the rows themselves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newArtifact } from '../../../services/core/data/artifacts.js';
import { allBuilders, builderIdByName, builderName } from '../../../services/core/data/builders.js';
import {
  buildOwnership,
  buildRequestBuilder,
  buildRequestOwner,
  owningBuilderId,
} from '../../../services/core/data/owners.js';
import { sql } from '../../../services/core/db/pool.js';
import { type Harness, openHarness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await openHarness('fixture');
});
afterAll(async () => {
  await h?.close();
});

describe('owners', () => {
  it('finds the builder of every build, request, step and log, and of nothing else', async () => {
    const rows: { kind: 'build' | 'buildrequest' | 'step' | 'log'; id: number; builderid: number }[] =
      await h.db.pool.query(sql`
        SELECT 'build' AS kind, id, builderid FROM builds
        UNION ALL SELECT 'buildrequest', id, builderid FROM buildrequests
        UNION ALL SELECT 'step', s.id, b.builderid FROM steps s JOIN builds b ON b.id = s.buildid
        UNION ALL SELECT 'log', l.id, b.builderid FROM logs l JOIN steps s ON s.id = l.stepid
                  JOIN builds b ON b.id = s.buildid`);
    expect(new Set(rows.map((r) => r.kind)).size).toBe(4);
    for (const r of rows)
      expect(await owningBuilderId(h.db.pool, r.kind, r.id), `${r.kind} ${r.id}`).toBe(r.builderid);
    for (const kind of ['build', 'buildrequest', 'step', 'log', 'test_result_set', 'artifact'] as const)
      expect(await owningBuilderId(h.db.pool, kind, 2 ** 31 - 1)).toBeNull();
  });

  it("finds an artifact's builder, finished or not (the fixture has none: one is added)", async () => {
    const [s] = await h.db.pool.query(sql`
      SELECT s.id AS stepid, s.buildid, b.builderid FROM steps s JOIN builds b ON b.id = s.buildid
      ORDER BY s.id DESC LIMIT 1`);
    const id = await h.run((tx) =>
      newArtifact(tx, { buildid: s.buildid, stepid: s.stepid, name: 'half.bin', kind: 'file' }),
    );
    expect(await owningBuilderId(h.db.pool, 'artifact', id)).toBe(s.builderid);
  });

  it("answers a build's builder and request, a request's builder and owner", async () => {
    const [b] = await h.db.pool.query(sql`
      SELECT a.id, a.buildrequestid, bl.name FROM builds a JOIN builders bl ON bl.id = a.builderid ORDER BY a.id LIMIT 1`);
    expect(await buildOwnership(h.db.pool, b.id)).toEqual({
      builder: b.name,
      buildrequestid: b.buildrequestid,
    });
    expect(await buildOwnership(h.db.pool, -1)).toBeUndefined();
    expect(await buildRequestBuilder(h.db.pool, b.buildrequestid)).toBe(b.name);
    expect(await buildRequestBuilder(h.db.pool, -1)).toBeNull();
    const [br] = await h.db.pool.query(sql`SELECT id, buildsetid FROM buildrequests ORDER BY id LIMIT 1`);
    await h.db.pool.query(
      sql`DELETE FROM buildset_properties WHERE buildsetid = ${br.buildsetid} AND property_name = 'owner'`,
    );
    expect(await buildRequestOwner(h.db.pool, br.id)).toBeNull();
    await h.db.pool.query(sql`INSERT INTO buildset_properties (buildsetid, property_name, property_value)
                              VALUES (${br.buildsetid}, 'owner', '["alice@example.org", "Force Build Form"]')`);
    expect(await buildRequestOwner(h.db.pool, br.id)).toBe('alice@example.org');
    await h.db.pool.query(sql`UPDATE buildset_properties SET property_value = 'not json'
                              WHERE buildsetid = ${br.buildsetid} AND property_name = 'owner'`);
    expect(await buildRequestOwner(h.db.pool, br.id)).toBeNull();
  });

  it('looks builders up by id and by name, and lists them all', async () => {
    const all = await allBuilders(h.db.pool);
    expect(all.length).toBeGreaterThan(0);
    expect(all.map((b) => b.id)).toEqual([...all.map((b) => b.id)].sort((x, y) => x - y));
    for (const b of all) {
      expect(await builderName(h.db.pool, b.id)).toBe(b.name);
      expect(await builderIdByName(h.db.pool, b.name)).toBe(b.id);
    }
    expect(await builderName(h.db.pool, -1)).toBeNull();
    expect(await builderIdByName(h.db.pool, 'no-such-builder')).toBeNull();
  });
});
