// Build requests: all-or-nothing claims raced by two masters on separate connections, reclaim,
// unclaim, completion (refused for a request nobody claimed) completing its build set,
// expired claims, and their events; the pending requests of many builders read in one
// statement, as a master's claim pass reads them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cancelBuildRequest,
  claimBuildRequests,
  claimEachBuildRequest,
  completeBuildRequests,
  pendingBuildRequests,
  reclaimBuildRequests,
  unclaimBuildRequests,
  unclaimExpiredRequests,
} from '../../../services/core/data/buildrequests.js';
import { addBuildset } from '../../../services/core/data/buildsets.js';
import { transact } from '../../../services/core/data/transaction.js';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import {
  apiGet,
  barrier,
  type Harness,
  insertBuilder,
  insertMaster,
  openHarness,
  pendingRequests,
} from './harness.js';

let h: Harness;
let m1: number;
let m2: number;
let builderid: number;

beforeAll(async () => {
  h = await openHarness();
  await h.run(async (tx) => {
    m1 = await insertMaster(tx);
    m2 = await insertMaster(tx);
    builderid = await insertBuilder(tx);
  });
});
afterAll(async () => {
  await h?.close();
});

const pending = (n: number) => h.run((tx) => pendingRequests(tx, builderid, n));

async function claims(brids: number[]): Promise<Map<number, number>> {
  const rows = await h.db.pool.query(
    sql`SELECT brid, masterid FROM buildrequest_claims WHERE brid = ANY(${brids}::int[])`,
  );
  return new Map(rows.map((r) => [r.brid as number, r.masterid as number]));
}

/** Two masters, each in its own transaction on its own connection, claiming at the same moment. */
async function race(a: number[], b: number[]): Promise<[boolean, boolean]> {
  const together = barrier(2);
  const claim = (brids: number[], masterid: number) =>
    transact({ ...h.ctx, db: h.wide }, async (tx) => {
      await tx.q.query(sql`SELECT 1`);
      await together();
      return claimBuildRequests(tx, brids, masterid);
    });
  return Promise.all([claim(a, m1), claim(b, m2)]);
}

describe('claimBuildRequests', () => {
  it('lets exactly one of two masters claim overlapping sets, all or nothing (many rounds)', async () => {
    const wins = { first: 0, second: 0 };
    for (let round = 0; round < 40; round++) {
      const [x, y, z] = (await pending(3)) as [number, number, number];
      const [first, second] = await race([x, y], [y, z]);
      expect(first !== second).toBe(true);
      const held = await claims([x, y, z]);
      if (first) {
        wins.first++;
        expect([...held.entries()].sort()).toEqual(
          [
            [x, m1],
            [y, m1],
          ].sort(),
        );
      } else {
        wins.second++;
        expect([...held.entries()].sort()).toEqual(
          [
            [y, m2],
            [z, m2],
          ].sort(),
        );
      }
    }
    expect(wins.first + wins.second).toBe(40);
  });

  it('lets both win when the sets do not overlap, and neither take a complete request', async () => {
    const [a, b] = (await pending(2)) as [number, number];
    expect(await race([a], [b])).toEqual([true, true]);
    const [c] = (await pending(1)) as [number];
    await h.db.pool.query(sql`UPDATE buildrequests SET complete = 1, results = 0 WHERE id = ${c}`);
    expect(await h.run((tx) => claimBuildRequests(tx, [c], m1))).toBe(false);
    expect(await h.run((tx) => claimBuildRequests(tx, [-1], m1))).toBe(false);
  });

  it('announces `claimed` under the three request keys with the claimed entity', async () => {
    const [brid] = (await pending(1)) as [number];
    const [{ buildsetid }] = await h.db.pool.query(
      sql`SELECT buildsetid FROM buildrequests WHERE id = ${brid}`,
    );
    await h.tap.clear();
    expect(await h.run((tx) => claimBuildRequests(tx, [brid], m1, 1234))).toBe(true);
    // The tap hears every suite's events on the shared Redis, whose ids are other databases'
    // (a prefix as wide as `buildsets/` once caught another suite's build set): this request's
    // own keys, with this claim's own time.
    const keys = [
      `buildsets/${buildsetid}/builders/${builderid}/buildrequests/${brid}/`,
      `buildrequests/${brid}/`,
      `builders/${builderid}/buildrequests/${brid}/`,
    ];
    const events = (await h.tap.events(...keys)).filter(
      (e) => (e.m as { claimed_at?: unknown } | null)?.claimed_at === 1234,
    );
    expect(events.map((e) => e.k)).toEqual(keys.map((k) => `${k}claimed`));
    const [api] = await apiGet(h.db.pool, `buildrequests/${brid}`);
    expect(api).toMatchObject({ claimed: true, claimed_at: 1234, claimed_by_masterid: m1, complete: false });
    expect(events[0]!.m).toEqual(api);
  });
});

describe('reclaim and unclaim', () => {
  it('renews only the claims the master holds, and gives back only its own', async () => {
    const [a, b] = (await pending(2)) as [number, number];
    await h.run((tx) => claimBuildRequests(tx, [a], m1, 100));
    await h.run((tx) => claimBuildRequests(tx, [b], m2, 100));
    expect(await h.run((tx) => reclaimBuildRequests(tx, [a, b], m1, 200))).toBe(false);
    expect(await h.run((tx) => reclaimBuildRequests(tx, [a], m1, 200))).toBe(true);
    const at = await h.db.pool.query(
      sql`SELECT brid, claimed_at FROM buildrequest_claims WHERE brid IN (${a}, ${b}) ORDER BY brid`,
    );
    expect(at.map((r) => r.claimed_at)).toEqual([200, 100]);

    await h.tap.clear();
    expect(await h.run((tx) => unclaimBuildRequests(tx, [a, b], m1))).toEqual([a]);
    expect([...(await claims([a, b])).entries()]).toEqual([[b, m2]]);
    expect(await h.tap.keys(`buildrequests/${a}/`, `buildrequests/${b}/`)).toEqual([
      `buildrequests/${a}/unclaimed`,
    ]);
  });

  it('unclaimExpiredRequests releases stale claims on incomplete requests only', async () => {
    const [stale, fresh, done] = (await pending(3)) as [number, number, number];
    const longAgo = Math.floor(Date.now() / 1000) - 3600;
    await h.run((tx) => claimBuildRequests(tx, [stale, done], m1, longAgo));
    await h.run((tx) => claimBuildRequests(tx, [fresh], m2));
    await h.run((tx) => completeBuildRequests(tx, [done], Results.SUCCESS, m1));
    await h.tap.clear();
    const released = await h.run((tx) => unclaimExpiredRequests(tx, 600));
    expect(released).toContain(stale);
    expect(released).not.toContain(fresh);
    expect(released).not.toContain(done);
    expect([...(await claims([stale, fresh, done])).keys()].sort()).toEqual([fresh, done].sort());
    expect(await h.tap.keys(`buildrequests/${stale}/`)).toEqual([`buildrequests/${stale}/unclaimed`]);
  });
});

/** A build set of two requests (two builders), both claimed by m1. */
async function claimedPair(): Promise<{ bsid: number; brids: number[] }> {
  return h.run(async (tx) => {
    const other = await insertBuilder(tx);
    const set = await addBuildset(tx, {
      scheduler: 's',
      sourcestamps: [{ branch: 'b' }],
      reason: 'r',
      builderids: [builderid, other],
    });
    const brids = [set.brids[builderid]!, set.brids[other]!];
    expect(await claimBuildRequests(tx, brids, m1)).toBe(true);
    return { bsid: set.bsid, brids };
  });
}

describe('completeBuildRequests', () => {
  it('refuses a request that is not claimed, or claimed by another master, and changes nothing (all or nothing)', async () => {
    const [claimed, unclaimed] = (await pending(2)) as [number, number];
    await h.run((tx) => claimBuildRequests(tx, [claimed], m1));
    await h.tap.clear();
    expect(await h.run((tx) => completeBuildRequests(tx, [unclaimed], Results.SUCCESS, m1))).toBe(false);
    expect(await h.run((tx) => completeBuildRequests(tx, [claimed, unclaimed], Results.SUCCESS, m1))).toBe(
      false,
    );
    const rows = await h.db.pool.query(
      sql`SELECT complete, results FROM buildrequests WHERE id IN (${claimed}, ${unclaimed})`,
    );
    expect(rows).toEqual([
      { complete: 0, results: -1 },
      { complete: 0, results: -1 },
    ]);
    expect(await h.tap.events(`buildrequests/${claimed}/`, `buildrequests/${unclaimed}/`)).toEqual([]);
    // Claimed, but by another master: a master that lost its claim writes nothing over it.
    expect(await h.run((tx) => completeBuildRequests(tx, [claimed], Results.SUCCESS, m2))).toBe(false);
    await expect(
      h.run((tx) => completeBuildRequests(tx, [claimed], Results.RETRY, m1)),
    ).rejects.toMatchObject({
      code: 'INVALID',
    });
  });

  it('completes claimed requests, and their build set with the worst result when the last one completes', async () => {
    const { bsid, brids } = await claimedPair();
    const [a, b] = brids as [number, number];
    await h.tap.clear();
    expect(await h.run((tx) => completeBuildRequests(tx, [a], Results.WARNINGS, m1, 500))).toBe(true);
    expect(await h.tap.keys(`buildsets/${bsid}/complete`)).toEqual([]);
    expect(await h.run((tx) => completeBuildRequests(tx, [a], Results.SUCCESS, m1))).toBe(false);
    expect(await h.run((tx) => completeBuildRequests(tx, [b], Results.SUCCESS, m1))).toBe(true);
    const [bs] = await apiGet(h.db.pool, `buildsets/${bsid}`);
    expect(bs).toMatchObject({ complete: true, results: Results.WARNINGS });
    const done = await h.tap.events(`buildsets/${bsid}/complete`);
    expect(done).toHaveLength(1);
    expect(done[0]!.m).toMatchObject({ bsid, complete: true, results: Results.WARNINGS });
    const [ra] = await apiGet(h.db.pool, `buildrequests/${a}`);
    expect(ra).toMatchObject({ complete: true, complete_at: 500, results: Results.WARNINGS });
  });

  it('two masters completing the last two requests of a set at once complete the set exactly once', async () => {
    for (let round = 0; round < 10; round++) {
      const { bsid, brids } = await claimedPair();
      await h.tap.clear();
      const together = barrier(2);
      await Promise.all(
        brids.map((brid) =>
          transact({ ...h.ctx, db: h.wide }, async (tx) => {
            await together();
            return completeBuildRequests(tx, [brid], Results.SUCCESS, m1);
          }),
        ),
      );
      expect(await h.tap.keys(`buildsets/${bsid}/complete`)).toEqual([`buildsets/${bsid}/complete`]);
    }
  });
});

describe('cancelBuildRequest', () => {
  it('still cancels a pending request and completes its set CANCELLED', async () => {
    const [brid] = (await pending(1)) as [number];
    const out = await h.run((tx) => cancelBuildRequest(tx, brid));
    expect(out).toEqual({ cancelled: true, buildsToStop: [] });
    const [api] = await apiGet(h.db.pool, `buildrequests/${brid}`);
    expect(api).toMatchObject({ complete: true, results: Results.CANCELLED });
  });
});

describe('pendingBuildRequests', () => {
  it("reads each asked builder's unclaimed pending requests in claim order, at most its limit, in one statement", async () => {
    const [a, b, c] = await h.run(async (tx) => [
      await insertBuilder(tx),
      await insertBuilder(tx),
      await insertBuilder(tx),
    ]);
    const [a1, a2, a3, a4] = await h.run((tx) => pendingRequests(tx, a!, 4));
    const [b1, b2] = await h.run((tx) => pendingRequests(tx, b!, 2));
    await h.run((tx) => pendingRequests(tx, c!, 2));
    await h.db.pool.query(sql`UPDATE buildrequests SET priority = 5 WHERE id = ${a3!}`);
    // Claimed, then complete: neither is a candidate any more.
    await h.run(async (tx) => {
      expect(await claimBuildRequests(tx, [a1!], m1)).toBe(true);
      await cancelBuildRequest(tx, b1!);
    });
    const got = await pendingBuildRequests(
      h.db.pool,
      new Map([
        [a!, 2],
        [b!, 5],
      ]),
    );
    expect([...got.keys()].sort()).toEqual([a, b].sort());
    expect(got.get(a!)!.map((r) => r.id)).toEqual([a3, a2]);
    expect(got.get(b!)!.map((r) => r.id)).toEqual([b2]);
    expect(a4).toBeGreaterThan(a3!);
    expect((await pendingBuildRequests(h.db.pool, new Map())).size).toBe(0);
  });

  it("reads the asked builders' first candidates only, not the whole queue", async () => {
    const [busy, asked, ...idle] = await h.run(async (tx) => {
      const ids: number[] = [];
      for (let i = 0; i < 21; i++) ids.push(await insertBuilder(tx));
      return ids;
    });
    // Another builder's queue of 3,000, written as a queue of forces leaves it (load/fleet/queue.ts).
    await h.db.pool.query(sql`
      WITH bs AS (INSERT INTO buildsets (reason, submitted_at, complete, results)
                  SELECT 'queue', 0, 0, -1 FROM generate_series(1, 3000) RETURNING id)
      INSERT INTO buildrequests (buildsetid, builderid, priority, complete, results, submitted_at, waited_for)
      SELECT id, ${busy!}, 0, 0, -1, 0, 0 FROM bs`);
    const mine = await h.run((tx) => pendingRequests(tx, asked!, 3));
    const read = await h.db.pool.tx(async (q) => {
      // The rows this backend has taken from buildrequests, by any scan. The counters are the
      // backend's not yet flushed ones, which can hold earlier transactions' too (PostgreSQL
      // flushes them at most once a second: CI read 4,445 once), so the read is their change.
      const taken = async () => {
        const [row] = await q.query(sql`
          SELECT pg_stat_get_xact_tuples_fetched('buildrequests'::regclass)
               + pg_stat_get_xact_tuples_returned('buildrequests'::regclass) AS n`);
        return Number(row.n);
      };
      const before = await taken();
      // A pass as the drain makes them: a few builders with an idle worker, one with requests.
      const got = await pendingBuildRequests(q, new Map([asked!, ...idle].map((b) => [b, 2])));
      expect(got.get(asked!)!.map((r) => r.id)).toEqual(mine.slice(0, 2));
      return (await taken()) - before;
    });
    // Ranked over the whole queue, the read took every pending request (3,149 rows here, the
    // planner not yet knowing of the new ones); now the asked builders' first ones and what
    // else of the table the plan looks at (185-189 rows in runs of this file).
    expect(read).toBeLessThan(300);
  });
});

describe('claimEachBuildRequest', () => {
  it('claims each free request, leaving those claimed or complete, and exactly one master wins each in a race', async () => {
    const [free1, taken, done, free2] = await pending(4);
    await h.run(async (tx) => {
      expect(await claimBuildRequests(tx, [taken!], m2)).toBe(true);
      await cancelBuildRequest(tx, done!);
    });
    await h.tap.clear();
    const won = await h.run((tx) => claimEachBuildRequest(tx, [free2!, taken!, done!, free1!], m1));
    expect(won).toEqual([free1, free2]);
    expect(await claims([free1!, taken!, done!, free2!])).toEqual(
      new Map([
        [free1!, m1],
        [taken!, m2],
        [free2!, m1],
      ]),
    );
    expect((await h.tap.events(`buildrequests/${free1}/`)).map((e) => e.k)).toEqual([
      `buildrequests/${free1}/claimed`,
    ]);
    // Two masters at once over the same requests: each request goes to one of them.
    for (let round = 0; round < 5; round++) {
      const brids = await pending(6);
      const together = barrier(2);
      const claim = (masterid: number) =>
        transact({ ...h.ctx, db: h.wide }, async (tx) => {
          await tx.q.query(sql`SELECT 1`);
          await together();
          return claimEachBuildRequest(tx, brids, masterid);
        });
      const [a, b] = await Promise.all([claim(m1), claim(m2)]);
      expect([...a, ...b].sort((x, y) => x - y)).toEqual([...brids].sort((x, y) => x - y));
      const held = await claims(brids);
      for (const id of a) expect(held.get(id)).toBe(m1);
      for (const id of b) expect(held.get(id)).toBe(m2);
    }
  });
});
