// The unclaimed requests are kept in two sets (migration 0008): pending ones, which masters
// claim from, and complete ones (cancelled before a claim), which only claimed=false reads. A
// request moves between them as it completes and un-completes, leaves both when claimed or
// deleted, and comes back to the right one when its claim goes; the totals stay exact. The
// migration itself moves what 0004's single set held into the right place.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../services/core/db/migrate.js';
import { type ConnectionPool, type SQLQuery, sql } from '../../services/core/db/pool.js';
import { keptTotals, trueTotals, unclaimedSets } from '../helpers/counts.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';

const MIGRATION = '0008_flotilla_pending_unclaimed';

/** A builder, a master and a build set to hang requests on; their ids. */
async function parts(db: ConnectionPool): Promise<{ builderid: number; masterid: number; bsid: number }> {
  const [b] = await db.query(
    sql`INSERT INTO builders (name, name_hash) VALUES ('b', md5('b')) RETURNING id AS builderid`,
  );
  const [m] = await db.query(
    sql`INSERT INTO masters (name, name_hash, active, last_active) VALUES ('m', md5('m'), 1, 0) RETURNING id AS masterid`,
  );
  const [s] = await db.query(
    sql`INSERT INTO buildsets (reason, submitted_at, complete, results) VALUES ('t', 1, 0, -1) RETURNING id AS bsid`,
  );
  return { ...b, ...m, ...s } as { builderid: number; masterid: number; bsid: number };
}

/** Requests on the builder, one per `complete` value given (NULL allowed); their ids. */
async function requests(
  db: ConnectionPool,
  p: { builderid: number; bsid: number },
  complete: (number | null)[],
): Promise<number[]> {
  const rows = await db.query(sql`
    INSERT INTO buildrequests (buildsetid, builderid, priority, complete, results, submitted_at)
    SELECT ${p.bsid}, ${p.builderid}, 0, c, CASE WHEN coalesce(c, 0) <> 0 THEN 6 ELSE -1 END, 1
    FROM unnest(${complete}::smallint[]) WITH ORDINALITY AS x(c, i) ORDER BY i RETURNING id`);
  return rows.map((r) => r.id as number);
}

async function expectExact(db: ConnectionPool): Promise<{ pending: number[]; complete: number[] }> {
  const { kept, truth } = await unclaimedSets(db);
  expect(kept).toEqual(truth);
  expect(await keptTotals(db)).toEqual(await trueTotals(db));
  return kept;
}

describe('the pending and complete unclaimed sets', () => {
  let db: TestDatabase;
  let p: { builderid: number; masterid: number; bsid: number };
  beforeAll(async () => {
    db = await createDatabase('migrated');
    p = await parts(db.pool);
  });
  afterAll(async () => {
    await db?.drop();
  });
  const run = (q: SQLQuery) => db.pool.query(q);

  it('follow each request through claim, unclaim, cancel, un-complete and delete', async () => {
    const [a, b, c] = (await requests(db.pool, p, [0, null, 0])) as [number, number, number];
    expect(await expectExact(db.pool)).toEqual({ pending: [a, b, c], complete: [] });

    // Cancelled before any claim: out of the masters' set, still unclaimed.
    await run(sql`UPDATE buildrequests SET complete = 1, results = 6, complete_at = 2 WHERE id = ${a}`);
    expect(await expectExact(db.pool)).toEqual({ pending: [b, c], complete: [a] });

    // Claimed, then completed, then the claim released (a dead master's, say): complete and unclaimed.
    await run(
      sql`INSERT INTO buildrequest_claims (brid, masterid, claimed_at) VALUES (${b}, ${p.masterid}, 1)`,
    );
    expect(await expectExact(db.pool)).toEqual({ pending: [c], complete: [a] });
    await run(sql`UPDATE buildrequests SET complete = 1, results = 0, complete_at = 2 WHERE id = ${b}`);
    expect(await expectExact(db.pool)).toEqual({ pending: [c], complete: [a] });
    await run(sql`DELETE FROM buildrequest_claims WHERE brid = ${b}`);
    expect(await expectExact(db.pool)).toEqual({ pending: [c], complete: [a, b] });

    // Un-completed (complete NULL is pending too): back in the masters' set.
    await run(
      sql`UPDATE buildrequests SET complete = NULL, results = -1, complete_at = NULL WHERE id = ${a}`,
    );
    expect(await expectExact(db.pool)).toEqual({ pending: [a, c], complete: [b] });

    // A claim on a complete request takes it out; an update that changes no completeness moves nothing.
    await run(
      sql`INSERT INTO buildrequest_claims (brid, masterid, claimed_at) VALUES (${b}, ${p.masterid}, 1)`,
    );
    await run(sql`UPDATE buildrequests SET priority = 9 WHERE id IN (${a}, ${b}, ${c})`);
    expect(await expectExact(db.pool)).toEqual({ pending: [a, c], complete: [] });

    // A claim released while pending, then deleted requests (one claimed: the claim cascades).
    await run(
      sql`INSERT INTO buildrequest_claims (brid, masterid, claimed_at) VALUES (${c}, ${p.masterid}, 1)`,
    );
    await run(sql`DELETE FROM buildrequest_claims WHERE brid = ${c}`);
    expect(await expectExact(db.pool)).toEqual({ pending: [a, c], complete: [] });
    await run(sql`DELETE FROM buildrequests WHERE id IN (${a}, ${b})`);
    expect(await expectExact(db.pool)).toEqual({ pending: [c], complete: [] });
  });

  it('stay exact through bulk statements', async () => {
    const ids = await requests(db.pool, p, [0, 1, 0, 1, null, 1, 0, 0]);
    await expectExact(db.pool);
    // Claim half in one statement, complete everything in another, then release every claim.
    await run(sql`INSERT INTO buildrequest_claims (brid, masterid, claimed_at)
                  SELECT id, ${p.masterid}, 1 FROM unnest(${ids.filter((_, i) => i % 2 === 0)}::int[]) id`);
    await expectExact(db.pool);
    await run(sql`UPDATE buildrequests SET complete = 1 WHERE id = ANY(${ids}::int[])`);
    await expectExact(db.pool);
    await run(sql`DELETE FROM buildrequest_claims WHERE brid = ANY(${ids}::int[])`);
    const after = await expectExact(db.pool);
    expect(after.complete).toEqual(expect.arrayContaining(ids));
    // Un-complete half, and move ids (no claims, no builds refer to them), in bulk.
    await run(sql`UPDATE buildrequests SET complete = 0 WHERE id = ANY(${ids.slice(0, 4)}::int[])`);
    await expectExact(db.pool);
    await run(
      sql`UPDATE buildrequests SET id = id + 1000000, complete = 1 - complete WHERE id = ANY(${ids}::int[])`,
    );
    const moved = await expectExact(db.pool);
    expect(moved.complete).toEqual(expect.arrayContaining(ids.slice(0, 4).map((id) => id + 1_000_000)));
    expect(moved.pending).toEqual(expect.arrayContaining(ids.slice(4).map((id) => id + 1_000_000)));
    // Claims can be released by a master's deletion (ON DELETE CASCADE) too.
    await run(sql`INSERT INTO buildrequest_claims (brid, masterid, claimed_at)
                  SELECT id, ${p.masterid}, 1 FROM buildrequests WHERE id > 1000000`);
    await expectExact(db.pool);
    await run(sql`DELETE FROM masters WHERE id = ${p.masterid}`);
    await expectExact(db.pool);
  });

  it('change write version (0007) when they change', async () => {
    const [row] = await db.pool.query(sql`
      SELECT count(*)::int AS n FROM pg_trigger
      WHERE tgrelid = 'flotilla.unclaimed_complete_buildrequests'::regclass AND tgname = 'flotilla_version'`);
    expect(row.n).toBe(1);
  });
});

describe(`migration ${MIGRATION}`, () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createDatabase('empty');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("moves what 0004's set held that is not pending, and keeps every total", async () => {
    const before = loadMigrations().filter((m) => m.id < MIGRATION);
    await migrate(db.pool, () => {}, before);
    const p = await parts(db.pool);
    const [pending, claimed, done, cancelled, cancelledToo] = (await requests(
      db.pool,
      p,
      [0, 0, 0, 1, 1],
    )) as [number, number, number, number, number];
    await db.pool.query(sql`INSERT INTO buildrequest_claims (brid, masterid, claimed_at)
                            VALUES (${claimed}, ${p.masterid}, 1), (${done}, ${p.masterid}, 1)`);
    await db.pool.query(sql`UPDATE buildrequests SET complete = 1, results = 0 WHERE id = ${done}`);
    // 0004's set holds every request without a claim, complete or not.
    const old = await db.pool.query(sql`SELECT brid FROM flotilla.unclaimed_buildrequests ORDER BY brid`);
    expect(old.map((r) => r.brid)).toEqual([pending, cancelled, cancelledToo]);
    const totals = await keptTotals(db.pool);

    // Up to this migration only: later ones are not what this test is about.
    const upTo = loadMigrations().filter((m) => m.id <= MIGRATION);
    expect((await migrate(db.pool, () => {}, upTo)).applied).toEqual([MIGRATION]);
    expect(await expectExact(db.pool)).toEqual({ pending: [pending], complete: [cancelled, cancelledToo] });
    expect(await keptTotals(db.pool)).toEqual(totals);
    expect((await migrate(db.pool, () => {}, upTo)).applied).toEqual([]);

    // The new triggers from here on: a cancel moves its request.
    await db.pool.query(sql`UPDATE buildrequests SET complete = 1, results = 6 WHERE id = ${pending}`);
    expect(await expectExact(db.pool)).toEqual({ pending: [], complete: [pending, cancelled, cancelledToo] });
  });
});
