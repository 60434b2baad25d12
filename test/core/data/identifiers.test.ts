// Buildbot's names and hashes: the slug rules (vectors from Buildbot 3.7's
// buildbot/util/identifiers.py) and name_hash, checked against every hashed row a real
// Buildbot wrote into the oracle's fixture.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashColumns, nameHash } from '../../../services/core/data/names.js';
import { sql } from '../../../services/core/db/pool.js';
import {
  forceIdentifier,
  INT32_MAX,
  idOfSegment,
  incrementIdentifier,
  isId,
  isIdentifier,
  isInt32,
  isUrlIdentifier,
} from '../../../services/core/identifiers.js';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';

describe('forceIdentifier and incrementIdentifier', () => {
  it.each([
    ['stdio', 'stdio'],
    ['foo bar', 'foo_bar'],
    ['1abc', '_abc'],
    ['héllo', 'héllo'],
    ['hé llo', 'h__llo'],
    ['a😀 b', 'a__b'],
    ['abc\n', 'abc\n'],
    ['', ''],
    ['-x', '-x'],
    ['a'.repeat(60), 'a'.repeat(50)],
  ])('forceIdentifier(50, %j) = %j', (name, slug) => {
    expect(forceIdentifier(50, name)).toBe(slug);
  });

  it('cuts by code points, not UTF-16 units', () => {
    expect(forceIdentifier(5, 'abcdefgh')).toBe('abcde');
    expect(forceIdentifier(3, '😀😀😀😀')).toBe('___');
    expect(forceIdentifier(3, 'é😀x😀')).toBe('__x');
    expect(isIdentifier(3, '😀😀😀')).toBe(true);
    expect(isIdentifier(2, '😀😀😀')).toBe(false);
  });

  it.each([
    ['foo', 'foo_2'],
    ['foo_2', 'foo_3'],
    ['foo_9', 'foo_10'],
    ['a'.repeat(50), `${'a'.repeat(48)}_2`],
    [`${'a'.repeat(48)}_9`, `${'a'.repeat(47)}_10`],
    ['x_01', 'x_2'],
  ])('incrementIdentifier(50, %j) = %j', (slug, next) => {
    expect(incrementIdentifier(50, slug)).toBe(next);
  });
});

describe('URL identifiers and 32-bit ids', () => {
  it.each([
    ['builder-1', true],
    ['_x.y', true],
    ['-', true],
    ['1abc', false],
    ['.hidden', false],
    ['has space', false],
    ['héllo', false],
    ['', false],
  ])('%j is a URL identifier: %s', (s, ok) => {
    expect(isUrlIdentifier(s)).toBe(ok);
  });

  it('counts the length limit in characters', () => {
    expect(isUrlIdentifier('a'.repeat(50), 50)).toBe(true);
    expect(isUrlIdentifier('a'.repeat(51), 50)).toBe(false);
  });

  it.each([
    ['0', 0],
    ['12', 12],
    ['007', 7],
    [String(INT32_MAX), INT32_MAX],
    [String(INT32_MAX + 1), null],
    ['99999999999', null],
    ['+1', null],
    ['-1', null],
    ['1_0', null],
    [' 1', null],
    ['', null],
  ])('the segment %j names id %s', (seg, id) => {
    expect(idOfSegment(seg)).toBe(id);
  });

  it('knows which numbers an integer column holds', () => {
    expect([isInt32(INT32_MAX), isInt32(-INT32_MAX), isInt32(INT32_MAX + 1), isInt32(1.5)]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect([isId(0), isId(-1), isId(INT32_MAX), isId('1')]).toEqual([true, false, true, false]);
  });
});

describe('name_hash', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createDatabase('fixture');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('is the sha1 of the UTF-8 name, as Buildbot wrote it for masters, builders, schedulers, change sources and tags', async () => {
    const rows = await db.pool.query(sql`
      SELECT name, name_hash FROM masters UNION ALL SELECT name, name_hash FROM builders
      UNION ALL SELECT name, name_hash FROM schedulers UNION ALL SELECT name, name_hash FROM changesources
      UNION ALL SELECT name, name_hash FROM tags`);
    expect(rows.length).toBeGreaterThan(10);
    for (const r of rows) expect(nameHash(r.name)).toBe(r.name_hash);
    expect(nameHash('vm:/srv/oracle/run/master')).toBe('6f4cdc4a18ed52133445a94add444b647d1faf88');
  });

  it('ss_hash of every fixture source stamp (None as 0xf5, NUL between values)', async () => {
    const rows = await db.pool.query(
      sql`SELECT ss_hash, branch, revision, repository, project, codebase, patchid FROM sourcestamps`,
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows)
      expect(hashColumns([r.branch, r.revision, r.repository, r.project, r.codebase, r.patchid])).toBe(
        r.ss_hash,
      );
  });
});
