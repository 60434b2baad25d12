// Schedulers and change sources: found by Buildbot's name_hash, owned by exactly one master
// even when several ask at the same moment, released with null; scheduler enabling and the
// change classifications a branch scheduler keeps.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addChange } from '../../../services/core/data/changes.js';
import { findChangeSourceId, trySetChangeSourceMaster } from '../../../services/core/data/changesources.js';
import { nameHash } from '../../../services/core/data/names.js';
import {
  classifyChanges,
  findSchedulerId,
  flushChangeClassifications,
  getChangeClassifications,
  schedulerEnable,
  trySetSchedulerMaster,
} from '../../../services/core/data/schedulers.js';
import { transact } from '../../../services/core/data/transaction.js';
import { sql } from '../../../services/core/db/pool.js';
import { apiGet, barrier, type Harness, insertMaster, openHarness, uniq } from './harness.js';

let h: Harness;
let masters: number[];
beforeAll(async () => {
  h = await openHarness();
  masters = await h.run(async (tx) => [
    await insertMaster(tx),
    await insertMaster(tx),
    await insertMaster(tx),
  ]);
});
afterAll(async () => {
  await h?.close();
});

describe('findSchedulerId and findChangeSourceId', () => {
  it('find or create by name_hash, once per name', async () => {
    const name = uniq('nightly');
    const id = await h.run((tx) => findSchedulerId(tx, name));
    expect(await h.run((tx) => findSchedulerId(tx, name))).toBe(id);
    const [row] = await h.db.pool.query(
      sql`SELECT name, name_hash, enabled FROM schedulers WHERE id = ${id}`,
    );
    expect(row).toEqual({ name, name_hash: nameHash(name), enabled: 1 });
    const cs = await h.run((tx) => findChangeSourceId(tx, 'GitPoller:repo'));
    expect(await h.run((tx) => findChangeSourceId(tx, 'GitPoller:repo'))).toBe(cs);
  });

  it('create one row when many ask at once', async () => {
    const name = uniq('racy');
    const together = barrier(8);
    const ids = await Promise.all(
      Array.from({ length: 8 }, () =>
        transact({ ...h.ctx, db: h.wide }, async (tx) => {
          await together();
          return findSchedulerId(tx, name);
        }),
      ),
    );
    expect(new Set(ids).size).toBe(1);
  });
});

/** Each master asks for the item in its own transaction, all at the same moment. */
async function raceFor(set: typeof trySetSchedulerMaster, itemid: number): Promise<boolean[]> {
  const together = barrier(masters.length);
  return Promise.all(
    masters.map((m) =>
      transact({ ...h.ctx, db: h.wide }, async (tx) => {
        await tx.q.query(sql`SELECT 1`);
        await together();
        return set(tx, itemid, m);
      }),
    ),
  );
}

describe('trySetSchedulerMaster and trySetChangeSourceMaster', () => {
  it('give a scheduler to exactly one of three masters asking at once (many rounds)', async () => {
    for (let round = 0; round < 25; round++) {
      const id = await h.run((tx) => findSchedulerId(tx, uniq('s')));
      const won = await raceFor(trySetSchedulerMaster, id);
      expect(won.filter(Boolean)).toHaveLength(1);
      const owner = masters[won.indexOf(true)];
      const rows = await h.db.pool.query(
        sql`SELECT masterid FROM scheduler_masters WHERE schedulerid = ${id}`,
      );
      expect(rows).toEqual([{ masterid: owner }]);
    }
  });

  it('give a change source to exactly one of three masters asking at once', async () => {
    for (let round = 0; round < 10; round++) {
      const id = await h.run((tx) => findChangeSourceId(tx, uniq('cs')));
      const won = await raceFor(trySetChangeSourceMaster, id);
      expect(won.filter(Boolean)).toHaveLength(1);
    }
  });

  it('answer true to the owner again, false to others, and hand over after a release', async () => {
    const [a, b] = masters as [number, number];
    const id = await h.run((tx) => findSchedulerId(tx, uniq('owned')));
    expect(await h.run((tx) => trySetSchedulerMaster(tx, id, a))).toBe(true);
    expect(await h.run((tx) => trySetSchedulerMaster(tx, id, a))).toBe(true);
    expect(await h.run((tx) => trySetSchedulerMaster(tx, id, b))).toBe(false);
    expect((await apiGet(h.db.pool, `schedulers/${id}`))[0]).toMatchObject({ master: { masterid: a } });
    expect(await h.run((tx) => trySetSchedulerMaster(tx, id, null))).toBe(true);
    expect((await apiGet(h.db.pool, `schedulers/${id}`))[0]).toMatchObject({ master: null });
    expect(await h.run((tx) => trySetSchedulerMaster(tx, id, b))).toBe(true);
  });
});

describe('schedulerEnable', () => {
  it('sets the flag and announces schedulers/<id>/updated with the scheduler', async () => {
    const id = await h.run((tx) => findSchedulerId(tx, uniq('toggle')));
    await h.tap.clear();
    await h.run((tx) => schedulerEnable(tx, id, false));
    const [api] = await apiGet(h.db.pool, `schedulers/${id}`);
    expect(api).toMatchObject({ enabled: false });
    expect(await h.tap.events(`schedulers/${id}/`)).toEqual([{ k: `schedulers/${id}/updated`, m: api }]);
    await expect(h.run((tx) => schedulerEnable(tx, -1, true))).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('change classifications', () => {
  it('are recorded, updated, filtered by branch and flushed', async () => {
    const id = await h.run((tx) => findSchedulerId(tx, uniq('branchy')));
    const repository = uniq('repo');
    const [c1, c2, c3] = await h.run(async (tx) => [
      await addChange(tx, { author: 'a', branch: 'main', repository }),
      await addChange(tx, { author: 'a', branch: 'dev', repository }),
      await addChange(tx, { author: 'a', branch: null, repository }),
    ]);
    await h.run((tx) =>
      classifyChanges(
        tx,
        id,
        new Map([
          [c1!, true],
          [c2!, false],
          [c3!, true],
        ]),
      ),
    );
    await h.run((tx) => classifyChanges(tx, id, new Map([[c2!, true]])));
    const all = await h.run((tx) => getChangeClassifications(tx, id));
    expect([...all]).toEqual([
      [c1, true],
      [c2, true],
      [c3, true],
    ]);
    expect([...(await h.run((tx) => getChangeClassifications(tx, id, { branch: 'main' })))]).toEqual([
      [c1, true],
    ]);
    expect([...(await h.run((tx) => getChangeClassifications(tx, id, { branch: null })))]).toEqual([
      [c3, true],
    ]);
    await h.run((tx) => flushChangeClassifications(tx, id, c3));
    expect([...(await h.run((tx) => getChangeClassifications(tx, id)))]).toEqual([[c3, true]]);
    await h.run((tx) => flushChangeClassifications(tx, id));
    expect((await h.run((tx) => getChangeClassifications(tx, id))).size).toBe(0);
  });
});
