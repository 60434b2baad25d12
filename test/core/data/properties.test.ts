// setBuildProperty and setBuildProperties on the fixture, whose build 1 carries properties a
// real Buildbot wrote: one event per synchronization, only when something changed, holding
// only what changed; values compared as JSON, whoever wrote them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type SourcedProperties,
  setBuildProperties,
  setBuildProperty,
} from '../../../services/core/data/properties.js';
import { sql } from '../../../services/core/db/pool.js';
import { apiGet, counted, type Harness, openHarness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await openHarness('fixture');
});
afterAll(async () => {
  await h?.close();
});

const KEY = (buildid: number) => `builds/${buildid}/properties/update`;

async function stored(buildid: number, name: string) {
  return h.db.pool.query(
    sql`SELECT value, source FROM build_properties WHERE buildid = ${buildid} AND name = ${name}`,
  );
}

describe('setBuildProperties', () => {
  it('sends no event when nothing changed, even against values Buildbot wrote (json.dumps text)', async () => {
    await h.tap.clear();
    const same = await h.run((tx) =>
      setBuildProperties(tx, 1, {
        scheduler: ['on-master', 'Scheduler'],
        buildnumber: [1, 'Build'],
        owners: [['bob <bob@example.invalid>'], 'Build'],
        codebase: ['', 'Build'],
      }),
    );
    expect(same).toEqual({});
    expect(await h.run((tx) => setBuildProperties(tx, 1, {}))).toEqual({});
    expect(await h.tap.events(KEY(1))).toEqual([]);
    expect(await stored(1, 'scheduler')).toEqual([{ value: '"on-master"', source: 'Scheduler' }]);
  });

  it('sends exactly one event holding only the new and changed properties', async () => {
    await h.tap.clear();
    const changed = await h.run((tx) =>
      setBuildProperties(tx, 1, {
        scheduler: ['on-master', 'Scheduler'],
        version: ['1.2.2', 'SetPropertyFromCommand Step'],
        pool: ['slow', 'Flotilla'],
        matrix: [{ os: ['linux', 'mac'], n: 2, ok: true, none: null }, 'Test'],
      }),
    );
    const expected = {
      version: ['1.2.2', 'SetPropertyFromCommand Step'],
      pool: ['slow', 'Flotilla'],
      matrix: [{ os: ['linux', 'mac'], n: 2, ok: true, none: null }, 'Test'],
    };
    expect(changed).toEqual(expected);
    expect(await h.tap.events(KEY(1))).toEqual([{ k: KEY(1), m: expected }]);
    const [props] = await apiGet(h.db.pool, 'builds/1/properties');
    expect(props).toMatchObject({ ...expected, scheduler: ['on-master', 'Scheduler'] });
    expect(await stored(1, 'pool')).toHaveLength(1);
  });

  it('compares objects regardless of key order, and notices a change of source alone', async () => {
    await h.run((tx) => setBuildProperties(tx, 2, { cfg: [{ a: 1, b: [1, 2] }, 'T'] }));
    await h.tap.clear();
    expect(await h.run((tx) => setBuildProperties(tx, 2, { cfg: [{ b: [1, 2], a: 1 }, 'T'] }))).toEqual({});
    expect(await h.run((tx) => setBuildProperties(tx, 2, { cfg: [{ a: 1, b: [2, 1] }, 'T'] }))).toEqual({
      cfg: [{ a: 1, b: [2, 1] }, 'T'],
    });
    expect(await h.run((tx) => setBuildProperties(tx, 2, { cfg: [{ a: 1, b: [2, 1] }, 'U'] }))).toEqual({
      cfg: [{ a: 1, b: [2, 1] }, 'U'],
    });
    expect((await h.tap.events(KEY(2))).map((e) => e.m)).toEqual([
      { cfg: [{ a: 1, b: [2, 1] }, 'T'] },
      { cfg: [{ a: 1, b: [2, 1] }, 'U'] },
    ]);
  });

  it('publishes nothing when its transaction rolls back', async () => {
    await h.tap.clear();
    await expect(
      h.run(async (tx) => {
        await setBuildProperties(tx, 3, { doomed: [1, 'T'] });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await h.tap.events(KEY(3))).toEqual([]);
    expect(await stored(3, 'doomed')).toEqual([]);
  });

  it('answers NOT_FOUND for a build that does not exist', async () => {
    await expect(h.run((tx) => setBuildProperties(tx, -1, { a: [1, 'x'] }))).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });
});

describe('setBuildProperties in a fixed number of statements (issue 35: a build start wrote one INSERT per property)', () => {
  const TEN = Object.fromEntries(
    Array.from({ length: 10 }, (_, i) => [`p${i}`, [{ i, s: `v'${i}` }, `S${i}`] as const]),
  );

  it('writes ten new properties in three statements (lock, read, one INSERT), each stored once as given', async () => {
    const c = await h.run(async (tx) => {
      const c = counted(tx);
      await setBuildProperties(c.tx, 5, TEN);
      return c.statements();
    });
    expect(c).toBe(3);
    for (let i = 0; i < 10; i++)
      expect(await stored(5, `p${i}`)).toEqual([
        { value: JSON.stringify({ i, s: `v'${i}` }), source: `S${i}` },
      ]);
  });

  it('changes nine stored properties and adds one in four statements (lock, read, one UPDATE, one INSERT), leaving the equal one alone', async () => {
    const next: SourcedProperties = { added: [true, 'New'] };
    Object.entries(TEN).forEach(([name, [v, src]], i) => {
      next[name] = i < 9 ? [[v], src] : [v, src];
    });
    await h.tap.clear();
    const c = await h.run(async (tx) => {
      const c = counted(tx);
      await setBuildProperties(c.tx, 5, next);
      return c.statements();
    });
    expect(c).toBe(4);
    expect(await stored(5, 'p0')).toEqual([{ value: JSON.stringify([{ i: 0, s: "v'0" }]), source: 'S0' }]);
    expect(await stored(5, 'p9')).toEqual([{ value: JSON.stringify({ i: 9, s: "v'9" }), source: 'S9' }]);
    expect(await stored(5, 'added')).toEqual([{ value: 'true', source: 'New' }]);
    const [event] = await h.tap.events(KEY(5));
    expect(Object.keys((event as { m: object }).m).sort()).toEqual(
      ['added', ...Array.from({ length: 9 }, (_, i) => `p${i}`)].sort(),
    );
  });
});

describe('setBuildProperty', () => {
  it('creates, then updates one property, with an event keyed by the property name each time', async () => {
    await h.tap.clear();
    await h.run((tx) => setBuildProperty(tx, 4, 'artifact', { url: 'http://x.test/a' }, 'Upload'));
    await h.run((tx) => setBuildProperty(tx, 4, 'artifact', { url: 'http://x.test/b' }, 'Upload'));
    expect(await stored(4, 'artifact')).toEqual([{ value: '{"url":"http://x.test/b"}', source: 'Upload' }]);
    expect((await h.tap.events(KEY(4))).map((e) => e.m)).toEqual([
      { artifact: [{ url: 'http://x.test/a' }, 'Upload'] },
      { artifact: [{ url: 'http://x.test/b' }, 'Upload'] },
    ]);
  });
});
