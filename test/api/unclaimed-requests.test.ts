// A pending request cancelled through the API completes without ever being claimed. It must
// leave the set masters claim from (migration 0008), and still be answered by claimed=false
// (Buildbot's meaning: no claim row, whatever complete is), with exact totals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SQLQuery, sql } from '../../services/core/db/pool.js';
import { unclaimedSets } from '../helpers/counts.js';
import { ApiUnderTest, collection } from './lib/harness.js';

let api: ApiUnderTest;
beforeAll(async () => {
  api = await ApiUnderTest.start('fixture');
});
afterAll(async () => {
  await api?.close();
});

const cancel = (brid: number) =>
  api.rpc(`/buildrequests/${brid}`, { jsonrpc: '2.0', method: 'cancel', id: 1, params: {} });

/** Ids and meta.total of a buildrequests collection, with the count(*) the total must equal. */
async function listed(path: string, truth: SQLQuery) {
  const { rows, total } = collection<{ buildrequestid: number }>(await api.get(path), 'buildrequests');
  const [row] = await api.db.pool.query(sql`SELECT count(*)::int AS n FROM buildrequests br WHERE ${truth}`);
  return { ids: rows.map((r) => r.buildrequestid).sort((a, b) => a - b), total, truth: row.n as number };
}

const unclaimed = sql`NOT EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = br.id)`;
const pending = sql`coalesce(br.complete, 0) = 0`;

describe('a pending request cancelled from the API', () => {
  it('leaves the pending set for the complete one and is still claimed=false', async () => {
    // The fixture's one unclaimed request, 101, is pending.
    expect((await unclaimedSets(api.db.pool)).kept).toEqual({ pending: [101], complete: [] });
    expect((await cancel(101)).status).toBe(200);
    const sets = await unclaimedSets(api.db.pool);
    expect(sets.kept).toEqual({ pending: [], complete: [101] });
    expect(sets.kept).toEqual(sets.truth);

    const [br] = (await api.get('/buildrequests/101')).json().buildrequests;
    expect(br).toMatchObject({ complete: true, claimed: false, results: 6 });
    expect(await listed('/buildrequests?claimed=false', unclaimed)).toEqual({
      ids: [101],
      total: 1,
      truth: 1,
    });
    expect(
      await listed('/buildrequests?complete=false&claimed=false', sql`${pending} AND ${unclaimed}`),
    ).toEqual({
      ids: [],
      total: 0,
      truth: 0,
    });
    expect(
      await listed('/buildrequests?complete=true&claimed=false', sql`NOT ${pending} AND ${unclaimed}`),
    ).toEqual({ ids: [101], total: 1, truth: 1 });
    expect(
      await listed('/builders/2/buildrequests?claimed=false', sql`br.builderid = 2 AND ${unclaimed}`),
    ).toEqual({ ids: [101], total: 1, truth: 1 });
    const claimed = await listed('/buildrequests?claimed=true', sql`NOT ${unclaimed}`);
    expect([claimed.total, claimed.ids.length]).toEqual([claimed.truth, claimed.truth]);
  });

  it('keeps lists and totals exact among new pending requests, some cancelled, some claimed', async () => {
    const rows = await api.db.pool.query(sql`
      INSERT INTO buildrequests (buildsetid, builderid, priority, complete, results, submitted_at)
      SELECT buildsetid, builderid, 0, 0, -1, 2 FROM buildrequests, generate_series(1, 4) WHERE id = 101
      RETURNING id`);
    const [a, b, c, d] = rows.map((r) => r.id as number).sort((x, y) => x - y) as [
      number,
      number,
      number,
      number,
    ];
    await api.db.pool.query(
      sql`INSERT INTO buildrequest_claims (brid, masterid, claimed_at) VALUES (${d}, 1, 2)`,
    );
    for (const brid of [a, c]) expect((await cancel(brid)).status).toBe(200);

    const sets = await unclaimedSets(api.db.pool);
    expect(sets.kept).toEqual({ pending: [b], complete: [101, a, c] });
    expect(sets.kept).toEqual(sets.truth);
    expect(await listed('/buildrequests?claimed=false', unclaimed)).toEqual({
      ids: [101, a, b, c],
      total: 4,
      truth: 4,
    });
    expect(
      await listed('/buildrequests?complete=false&claimed=false', sql`${pending} AND ${unclaimed}`),
    ).toEqual({
      ids: [b],
      total: 1,
      truth: 1,
    });
    expect(await listed('/buildrequests?claimed__ne=true', unclaimed)).toMatchObject({ ids: [101, a, b, c] });
  });
});
