// The write notices' keys are spelled twice: in services/api/cache/keys.ts, which the page
// cache names a page's parts by, and in SQL (flotilla.write_keys, migration 0016), which the
// triggers name a write's parts by. A typo on either side would compile, migrate, and keep a
// page past a write to its part. Real writes to each partitioned table, heard on a real
// listening connection, must name exactly the keys the table spells for the rows written.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { narrowed, PARTS, type PartTable, partKey, rowKeys } from '../../services/api/cache/keys.js';
import { WRITES_CHANNEL } from '../../services/api/cache/write-notices.js';
import { sql } from '../../services/core/db/pool.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';

let db: TestDatabase;
let listener: pg.Client;
const heard: string[] = [];

beforeAll(async () => {
  db = await createDatabase('fixture');
  listener = new pg.Client({ connectionString: db.url });
  await listener.connect();
  listener.on('notification', (n) => {
    if (n.channel === WRITES_CHANNEL && n.payload !== undefined) heard.push(n.payload);
  });
  await listener.query(`LISTEN ${WRITES_CHANNEL}`);
});
afterAll(async () => {
  await listener?.end();
  await db?.drop();
});

type Row = Record<string, number | string | boolean | undefined>;

/**
 * The notices of one write statement. PostgreSQL sends a listener the notices of every
 * transaction that committed before it took a query before it answers that query, so once
 * the query after the write returns, every notice of the write has arrived.
 */
async function noticesOf(write: () => Promise<unknown>): Promise<string[]> {
  heard.length = 0;
  await write();
  await listener.query('SELECT 1');
  return [...new Set(heard)].sort();
}

/** A row of the table as its parts see it: its columns, and builds' `complete`. */
async function someRow(table: PartTable, where = sql`true`): Promise<{ row: Row; ctid: string }> {
  const [found] = (await db.pool.query(sql`
    SELECT t.ctid::text AS ctid, to_jsonb(t) AS row FROM ${sql.ident(table)} t WHERE ${where} LIMIT 1`)) as {
    ctid: string;
    row: Record<string, unknown>;
  }[];
  if (!found) throw new Error(`no row of ${table} in the fixture`);
  const row = found.row as Row;
  return { ctid: found.ctid, row: table === 'builds' ? { ...row, complete: row.complete_at !== null } : row };
}

const sorted = (keys: Iterable<string>) => [...new Set(keys)].sort();

describe('the write notices’ keys, as declared once (services/api/cache/keys.ts)', () => {
  it('are sent by exactly the tables the declaration names', async () => {
    const rows = (await db.pool.query(sql`
      SELECT DISTINCT c.relname AS table FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
      WHERE g.tgname LIKE 'flotilla_notice_%'`)) as { table: string }[];
    expect(rows.map((r) => r.table).sort()).toEqual(Object.keys(PARTS).sort());
  });

  for (const table of Object.keys(PARTS) as PartTable[]) {
    it(`name every part of ${table} that holds a row written, as the declaration spells it`, async () => {
      const { row, ctid } = await someRow(table);
      // A write that changes nothing is still a write of the row: its parts before and after.
      const column = PARTS[table][0][0];
      const keys = await noticesOf(() =>
        db.pool.query(sql`UPDATE ${sql.ident(table)} SET ${sql.ident(column)} = ${sql.ident(column)}
                          WHERE ctid = ${ctid}::tid`),
      );
      expect({ table, keys }).toEqual({ table, keys: sorted(rowKeys(table, row)) });
    });
  }

  it('name a build’s parts both before and after it finishes', async () => {
    const { row } = await someRow('builds', sql`t.complete_at IS NOT NULL`);
    const reopen = () => db.pool.query(sql`UPDATE builds SET complete_at = NULL WHERE id = ${row.id}`);
    const running = { ...row, complete: false };
    const keys = await noticesOf(reopen);
    expect(keys).toEqual(sorted([...rowKeys('builds', row), ...rowKeys('builds', running)]));
    // Both spellings of `complete` are seen, so a typo in either shows.
    expect(keys).toEqual(expect.arrayContaining(['builds/complete=t', 'builds/complete=f']));
    await db.pool.query(sql`UPDATE builds SET complete_at = ${row.complete_at} WHERE id = ${row.id}`);
  });
});

describe('a page’s part, spelled (services/api/cache/keys.ts)', () => {
  it('names the whole table when a value is missing, which no write can leave stale', () => {
    expect(partKey('steps', { buildid: 5 })).toBe('steps/buildid=5');
    expect(partKey('steps', { buildid: undefined })).toBe('steps');
  });

  it('narrows a part by a filter only where the table has the finer part', () => {
    const spell = (p: ReturnType<typeof narrowed<'builds'>>) => (p ? partKey('builds', p) : 'builds');
    expect(spell(narrowed('builds', { builderid: 3 }, 'complete', true))).toBe(
      'builds/builderid=3/complete=t',
    );
    expect(spell(narrowed('builds', undefined, 'complete', false))).toBe('builds/complete=f');
    // A single build is already its own part: no builds/id=…/complete=… exists to narrow to.
    expect(spell(narrowed('builds', { id: 4 }, 'complete', true))).toBe('builds/id=4');
  });
});
