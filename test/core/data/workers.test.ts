// Workers: found by name, configured on a master's builders, connected and disconnected,
// paused and graceful, with Buildbot's events carrying the worker as /workers serves it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateBuilderList } from '../../../services/core/data/builders.js';
import { transact } from '../../../services/core/data/transaction.js';
import {
  findWorkerId,
  findWorkerIds,
  setWorkerState,
  workerConfigured,
  workerConnected,
  workerDisconnected,
  workerMissing,
  workersConfigured,
  workersConnected,
} from '../../../services/core/data/workers.js';
import { sql } from '../../../services/core/db/pool.js';
import { apiGet, barrier, counted, type Harness, insertMaster, openHarness, uniq } from './harness.js';

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

describe('findWorkerId', () => {
  it('finds or creates by name, one row even when asked at once, and refuses a non-identifier', async () => {
    const name = uniq('w');
    const together = barrier(6);
    const ids = await Promise.all(
      Array.from({ length: 6 }, () =>
        transact({ ...h.ctx, db: h.wide }, async (tx) => {
          await together();
          return findWorkerId(tx, name);
        }),
      ),
    );
    expect(new Set(ids).size).toBe(1);
    const [row] = await h.db.pool.query(sql`SELECT info, paused, graceful FROM workers WHERE name = ${name}`);
    expect(row).toEqual({ info: '{}', paused: 0, graceful: 0 });
    await expect(h.run((tx) => findWorkerId(tx, 'has space'))).rejects.toMatchObject({ code: 'INVALID' });
    await expect(h.run((tx) => findWorkerId(tx, 'x'.repeat(51)))).rejects.toMatchObject({ code: 'INVALID' });
  });
});

describe('workerConfigured', () => {
  it("keeps exactly the given builders of that master, leaving other masters' alone", async () => {
    const names = [uniq('b'), uniq('b'), uniq('b')];
    const ids1 = await h.run((tx) => updateBuilderList(tx, m1, names));
    const ids2 = await h.run((tx) => updateBuilderList(tx, m2, names));
    const w = await h.run((tx) => findWorkerId(tx, uniq('w')));
    await h.run((tx) => workerConfigured(tx, w, m1, ids1));
    await h.run((tx) => workerConfigured(tx, w, m2, [ids2[0]!]));
    await h.run((tx) => workerConfigured(tx, w, m1, [ids1[1]!, ids1[2]!, -7]));
    const [api] = await apiGet(h.db.pool, `workers/${w}`);
    const on = (api!.configured_on as { builderid: number; masterid: number }[])
      .map((c) => [c.masterid, c.builderid])
      .sort();
    expect(on).toEqual(
      [
        [m1, ids1[1]],
        [m1, ids1[2]],
        [m2, ids2[0]],
      ].sort(),
    );
    await h.run((tx) => workerConfigured(tx, w, m1, []));
    expect((await apiGet(h.db.pool, `masters/${m1}/workers`)).map((x) => x.workerid)).not.toContain(w);
    expect((await apiGet(h.db.pool, `masters/${m2}/workers`)).map((x) => x.workerid)).toContain(w);
  });
});

describe('findWorkerIds and workersConfigured (a master registering many at once)', () => {
  it('find or create every name, in the order given, and configure each worker on exactly its builders', async () => {
    const names = [uniq('b'), uniq('b'), uniq('b')];
    const ids = await h.run((tx) => updateBuilderList(tx, m1, names));
    const known = await h.run((tx) => findWorkerId(tx, uniq('w')));
    const knownName = (await h.db.pool.query(sql`SELECT name FROM workers WHERE id = ${known}`))[0]!.name;
    const [x, y] = [uniq('w'), uniq('w')];
    const found = await h.run((tx) => findWorkerIds(tx, [x, knownName, y, x]));
    expect(found.get(knownName)).toBe(known);
    expect(found.size).toBe(3);
    expect(found.get(x)!).toBeLessThan(found.get(y)!);
    await h.run((tx) => workerConfigured(tx, known, m1, [ids[0]!]));
    await h.run((tx) =>
      workersConfigured(
        tx,
        m1,
        new Map([
          [found.get(x)!, [ids[0]!, ids[1]!]],
          [found.get(y)!, [ids[2]!, ids[2]!]],
          [known, []],
        ]),
      ),
    );
    const rows = await h.db.pool.query(sql`
      SELECT cw.workerid, bm.builderid FROM configured_workers cw JOIN builder_masters bm ON bm.id = cw.buildermasterid
      WHERE bm.masterid = ${m1} AND cw.workerid = ANY(${[...found.values()]}::int[]) ORDER BY 1, 2`);
    expect(rows).toEqual([
      { workerid: found.get(x), builderid: ids[0] },
      { workerid: found.get(x), builderid: ids[1] },
      { workerid: found.get(y), builderid: ids[2] },
    ]);
    await expect(h.run((tx) => findWorkerIds(tx, ['ok', 'has space']))).rejects.toMatchObject({
      code: 'INVALID',
    });
  });
});

describe('connections and state', () => {
  it('connects (twice is fine), stores the info, and announces connected / disconnected / state_updated', async () => {
    const w = await h.run((tx) => findWorkerId(tx, uniq('w')));
    await h.tap.clear();
    const info = { admin: 'ops <ops@example.invalid>', host: 'box ✓', version: '3.7.0', access_uri: null };
    await h.run((tx) => workerConnected(tx, w, m1, info));
    await h.run((tx) => workerConnected(tx, w, m1, info));
    const [connected] = await apiGet(h.db.pool, `workers/${w}`);
    expect(connected).toMatchObject({ connected_to: [{ masterid: m1 }], workerinfo: info });
    await h.run((tx) => setWorkerState(tx, w, true, false));
    await h.run((tx) => workerDisconnected(tx, w, m1));
    const [gone] = await apiGet(h.db.pool, `workers/${w}`);
    expect(gone).toMatchObject({ connected_to: [], paused: true, graceful: false });
    await h.run((tx) => workerMissing(tx, w, '2026-11-22 00:00:00', ['ops@example.invalid']));

    const events = await h.tap.events(`workers/${w}/`);
    expect(events.map((e) => e.k)).toEqual([
      `workers/${w}/connected`,
      `workers/${w}/connected`,
      `workers/${w}/state_updated`,
      `workers/${w}/disconnected`,
      `workers/${w}/missing`,
    ]);
    expect(events[0]!.m).toEqual(connected);
    expect(events[3]!.m).toEqual(gone);
    expect(events[4]!.m).toEqual({
      ...gone,
      last_connection: '2026-11-22 00:00:00',
      notify: ['ops@example.invalid'],
    });
    await expect(h.run((tx) => workerConnected(tx, -1, m1, {}))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(h.run((tx) => setWorkerState(tx, -1, false, false))).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });
});

describe('workersConnected (a master coming up while its workers log in)', () => {
  it('connects many in three statements, keeps the last info of one named twice, and returns the ids it has no worker for', async () => {
    const ws = await h.run(async (tx) => {
      const ids: number[] = [];
      for (let i = 0; i < 40; i++) ids.push(await findWorkerId(tx, uniq('w')));
      return ids;
    });
    await h.tap.clear();
    const [missing, statements] = await h.run(async (tx) => {
      const c = counted(tx);
      const got = await workersConnected(c.tx, m2, [
        ...ws.map((workerid, i) => ({ workerid, info: { host: `h${i}` } })),
        { workerid: ws[0]!, info: { host: 'again' } },
        { workerid: -5, info: {} },
      ]);
      return [got, c.statements()] as const;
    });
    expect(missing).toEqual([-5]);
    expect(statements).toBe(3);
    const [{ n }] = await h.db.pool.query(
      sql`SELECT count(*)::int AS n FROM connected_workers WHERE masterid = ${m2} AND workerid = ANY(${ws}::int[])`,
    );
    expect(n).toBe(40);
    const [first] = await apiGet(h.db.pool, `workers/${ws[0]}`);
    expect(first).toMatchObject({ connected_to: [{ masterid: m2 }], workerinfo: { host: 'again' } });
    const [other] = await apiGet(h.db.pool, `workers/${ws[7]}`);
    expect(other!.workerinfo).toEqual({ host: 'h7' });
    // One `connected` event a worker, carrying the worker as /workers/<id> serves it.
    for (const w of [ws[0]!, ws[39]!]) {
      const events = await h.tap.events(`workers/${w}/`);
      expect(events.map((e) => e.k)).toEqual([`workers/${w}/connected`]);
      expect(events[0]!.m).toEqual((await apiGet(h.db.pool, `workers/${w}`))[0]);
    }
    expect(await h.run((tx) => workersConnected(tx, m2, []))).toEqual([]);
  });
});
