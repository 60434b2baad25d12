// addChange: the rows Buildbot writes (files in order, [value, "Change"] properties, a shared
// source stamp, the parent chain per branch, the author as a user), continuing the fixture's
// own history, and the change as /changes serves it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addChange } from '../../../services/core/data/changes.js';
import { transact } from '../../../services/core/data/transaction.js';
import { sql } from '../../../services/core/db/pool.js';
import { apiGet, barrier, type Harness, openHarness, uniq } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await openHarness('fixture');
});
afterAll(async () => {
  await h?.close();
});

const ORACLE = { repository: 'https://git.example.invalid/oracle.git', project: 'oracle', codebase: '' };

describe('addChange', () => {
  it('writes what Buildbot writes, continues the branch from Buildbot’s last change, and links the author', async () => {
    await h.tap.clear();
    const changeid = await h.run((tx) =>
      addChange(tx, {
        author: 'bob <bob@example.invalid>',
        files: ['src/z.c', 'README.md', 'src/a.c'],
        comments: 'Fix the thing ✓',
        revision: 'abc123',
        when_timestamp: 1795400000,
        branch: 'master',
        category: 'bugfix',
        revlink: 'https://git.example.invalid/commit/abc123',
        properties: { ticket: 'OR-99', reviewers: ['ann', 'ben'], meta: { n: 1 } },
        ...ORACLE,
        src: 'git',
      }),
    );
    const [row] = await h.db.pool.query(sql`SELECT * FROM changes WHERE changeid = ${changeid}`);
    expect(row).toMatchObject({
      author: 'bob <bob@example.invalid>',
      committer: null,
      branch: 'master',
      revision: 'abc123',
      when_timestamp: 1795400000,
      parent_changeids: 50,
      ...ORACLE,
    });
    const props = await h.db.pool.query(
      sql`SELECT property_name, property_value FROM change_properties WHERE changeid = ${changeid} ORDER BY 1`,
    );
    expect(props.map((p) => [p.property_name, JSON.parse(p.property_value)])).toEqual([
      ['meta', [{ n: 1 }, 'Change']],
      ['reviewers', [['ann', 'ben'], 'Change']],
      ['ticket', ['OR-99', 'Change']],
    ]);
    const users = await h.db.pool.query(sql`SELECT uid FROM change_users WHERE changeid = ${changeid}`);
    expect(users).toEqual([{ uid: 1 }]);

    const [api] = await apiGet(h.db.pool, `changes/${changeid}`);
    expect(api).toMatchObject({
      changeid,
      parent_changeids: [50],
      files: ['src/z.c', 'README.md', 'src/a.c'],
      comments: 'Fix the thing ✓',
      properties: {
        ticket: ['OR-99', 'Change'],
        reviewers: [['ann', 'ben'], 'Change'],
        meta: [{ n: 1 }, 'Change'],
      },
      sourcestamp: { branch: 'master', revision: 'abc123', patch: null, ...ORACLE },
    });
    const events = await h.tap.events(`changes/${changeid}/`);
    expect(events).toEqual([{ k: `changes/${changeid}/new`, m: api }]);
  });

  it('defaults as Buildbot does: no branch, empty strings, now, no user without a known src', async () => {
    const before = Math.floor(Date.now() / 1000);
    const author = uniq('someone');
    const changeid = await h.run((tx) => addChange(tx, { author, src: 'perforce' }));
    const [row] = await h.db.pool.query(sql`SELECT * FROM changes WHERE changeid = ${changeid}`);
    expect(row).toMatchObject({
      branch: null,
      revision: null,
      revlink: '',
      comments: '',
      repository: '',
      project: '',
      codebase: '',
      category: null,
    });
    expect(row.when_timestamp).toBeGreaterThanOrEqual(before);
    expect(await h.db.pool.query(sql`SELECT * FROM change_users WHERE changeid = ${changeid}`)).toEqual([]);
    expect((await apiGet(h.db.pool, `changes/${changeid}`))[0]).toMatchObject({
      files: [],
      properties: {},
      parent_changeids: expect.any(Array),
    });
  });

  it('chains parents per branch, repository, project and codebase (a null branch is a branch too)', async () => {
    const repository = uniq('repo');
    const add = (branch: string | null, extra: object = {}) =>
      h.run((tx) => addChange(tx, { author: 'a', branch, repository, ...extra }));
    const m1 = await add('main');
    const d1 = await add('dev');
    const m2 = await add('main');
    const n1 = await add(null);
    const n2 = await add(null);
    const cb = await add('main', { codebase: 'lib' });
    const pj = await add('main', { project: 'other' });
    const rows = await h.db.pool.query(sql`
      SELECT changeid, parent_changeids FROM changes WHERE repository = ${repository} ORDER BY changeid`);
    expect(rows.map((r) => [r.changeid, r.parent_changeids])).toEqual([
      [m1, null],
      [d1, null],
      [m2, m1],
      [n1, null],
      [n2, n1],
      [cb, null],
      [pj, null],
    ]);
  });

  it('shares the source stamp of an identical stamp, and keeps concurrent changes of one branch in a line', async () => {
    const repository = uniq('repo');
    const a = await h.run((tx) => addChange(tx, { author: 'x', branch: 'b', revision: 'r1', repository }));
    const b = await h.run((tx) => addChange(tx, { author: 'y', branch: 'b', revision: 'r1', repository }));
    const ss = await h.db.pool.query(
      sql`SELECT DISTINCT sourcestampid FROM changes WHERE changeid IN (${a}, ${b})`,
    );
    expect(ss).toHaveLength(1);

    const n = 8;
    const together = barrier(n);
    const ids = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        transact({ ...h.ctx, db: h.wide }, async (tx) => {
          await together();
          return addChange(tx, { author: `c${i}`, branch: 'line', repository });
        }),
      ),
    );
    const rows = await h.db.pool.query(sql`
      SELECT changeid, parent_changeids FROM changes WHERE repository = ${repository} AND branch = 'line'
      ORDER BY changeid`);
    expect(rows).toHaveLength(n);
    expect(rows[0].parent_changeids).toBeNull();
    for (let i = 1; i < n; i++) expect(rows[i].parent_changeids).toBe(rows[i - 1].changeid);
    expect(ids.sort((x, y) => x - y)).toEqual(rows.map((r) => r.changeid));
  });

  it('creates a user once per author and system, with a fresh identifier on a clash', async () => {
    const author = uniq('dev <dev@example.invalid>');
    const c1 = await h.run((tx) => addChange(tx, { author, src: 'git' }));
    const c2 = await h.run((tx) => addChange(tx, { author, src: 'git' }));
    const c3 = await h.run((tx) => addChange(tx, { author, src: 'hg' }));
    const uids = await h.db.pool.query(
      sql`SELECT changeid, uid FROM change_users WHERE changeid IN (${c1}, ${c2}, ${c3}) ORDER BY changeid`,
    );
    expect(uids[0].uid).toBe(uids[1].uid);
    expect(uids[2].uid).not.toBe(uids[0].uid);
    const idents = await h.db.pool.query(
      sql`SELECT identifier FROM users WHERE uid IN (${uids[0].uid}, ${uids[2].uid}) ORDER BY uid`,
    );
    expect(idents.map((r) => r.identifier)).toEqual([author, `${author}_2`]);
  });

  it('refuses values too long for their columns instead of failing in the database', async () => {
    await expect(
      h.run((tx) => addChange(tx, { author: 'a', branch: 'b'.repeat(256) })),
    ).rejects.toMatchObject({
      code: 'INVALID',
    });
    await expect(
      h.run((tx) => addChange(tx, { author: 'a', files: ['f'.repeat(1025)] })),
    ).rejects.toMatchObject({
      code: 'INVALID',
    });
  });
});
