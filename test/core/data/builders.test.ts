// updateBuilderList and updateBuilderInfo: builders and tags by Buildbot's name_hash, one
// builder_masters row per builder a master runs, started/stopped/update events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBuilderId, updateBuilderInfo, updateBuilderList } from '../../../services/core/data/builders.js';
import { nameHash } from '../../../services/core/data/names.js';
import { workerConfigured } from '../../../services/core/data/workers.js';
import { sql } from '../../../services/core/db/pool.js';
import { apiGet, type Harness, insertMaster, insertWorker, openHarness, uniq } from './harness.js';

let h: Harness;
let m1: number;
let m2: number;
beforeAll(async () => {
  h = await openHarness();
  [m1, m2] = await h.run(async (tx) => [await insertMaster(tx), await insertMaster(tx)]);
});
afterAll(async () => {
  await h?.close();
});

describe('updateBuilderList', () => {
  it('records the builders a master runs, announcing those it starts and stops', async () => {
    const [a, b, c] = [uniq('a'), uniq('b'), uniq('c')];
    await h.tap.clear();
    const [ida, idb] = (await h.run((tx) => updateBuilderList(tx, m1, [a, b]))) as [number, number];
    const rows =
      await h.db.pool.query(sql`SELECT id, name, name_hash FROM builders WHERE id IN (${ida}, ${idb})
                                          ORDER BY id`);
    expect(rows).toEqual([
      { id: ida, name: a, name_hash: nameHash(a) },
      { id: idb, name: b, name_hash: nameHash(b) },
    ]);
    const [, idc] = (await h.run((tx) => updateBuilderList(tx, m1, [b, c]))) as [number, number];
    const events = await h.tap.events(`builders/${ida}/`, `builders/${idb}/`, `builders/${idc}/`);
    expect(events).toEqual([
      { k: `builders/${ida}/started`, m: { builderid: ida, masterid: m1, name: a } },
      { k: `builders/${idb}/started`, m: { builderid: idb, masterid: m1, name: b } },
      { k: `builders/${ida}/stopped`, m: { builderid: ida, masterid: m1, name: a } },
      { k: `builders/${idc}/started`, m: { builderid: idc, masterid: m1, name: c } },
    ]);
    await h.run((tx) => updateBuilderList(tx, m2, [b]));
    expect((await apiGet(h.db.pool, `builders/${idb}`))[0]).toMatchObject({ masterids: [m1, m2].sort() });
    expect((await apiGet(h.db.pool, `builders/${ida}`))[0]).toMatchObject({ masterids: [] });
    expect(await h.run((tx) => findBuilderId(tx, a, false))).toBe(ida);
    expect(await h.run((tx) => findBuilderId(tx, uniq('nope'), false))).toBeNull();
  });

  it('drops the workers configured on a builder the master no longer runs', async () => {
    const name = uniq('with-workers');
    const [id] = (await h.run((tx) => updateBuilderList(tx, m1, [name]))) as [number];
    const workerid = await h.run((tx) => insertWorker(tx));
    await h.run((tx) => workerConfigured(tx, workerid, m1, [id]));
    expect((await apiGet(h.db.pool, `workers/${workerid}`))[0]).toMatchObject({
      configured_on: [{ builderid: id, masterid: m1 }],
    });
    await h.run((tx) => updateBuilderList(tx, m1, []));
    expect((await apiGet(h.db.pool, `workers/${workerid}`))[0]).toMatchObject({ configured_on: [] });
  });

  it('applies descriptions and tags, announcing an update only when they change', async () => {
    const name = uniq('tagged');
    await h.tap.clear();
    const spec = { name, description: 'Builds it ✓', tags: ['linux', 'fast', 'linux'] };
    const [id] = (await h.run((tx) => updateBuilderList(tx, m1, [spec]))) as [number];
    await h.run((tx) => updateBuilderList(tx, m1, [spec]));
    const [api] = await apiGet(h.db.pool, `builders/${id}`);
    expect(api).toMatchObject({ name, description: 'Builds it ✓', tags: ['linux', 'fast'], masterids: [m1] });
    const tags = await h.db.pool.query(sql`SELECT name, name_hash FROM tags WHERE name IN ('linux', 'fast')`);
    for (const t of tags) expect(t.name_hash).toBe(nameHash(t.name));
    const updates = await h.tap.events(`builders/${id}/update`);
    expect(updates).toEqual([{ k: `builders/${id}/update`, m: api }]);

    expect(await h.run((tx) => updateBuilderInfo(tx, id, null, ['fast']))).toBe(true);
    expect((await apiGet(h.db.pool, `builders/${id}`))[0]).toMatchObject({
      description: null,
      tags: ['fast'],
    });
    await expect(h.run((tx) => updateBuilderInfo(tx, -1, null, []))).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });
});
