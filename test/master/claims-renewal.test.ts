// The renewal of a master's held claims (services/master/claims.ts): all of them in one
// transaction while every one is still held; when one is gone (its request completed or
// handed to another master), each on its own as before, so that only that one's build hears
// it is lost and the others are renewed all the same.
import { afterAll, expect, it } from 'vitest';
import {
  claimBuildRequests,
  completeBuildRequests,
  findBuilderId,
  masterActive,
  transact,
} from '../../services/core/data/index.js';
import type { ConnectionPool, Queryable } from '../../services/core/db/pool.js';
import { sql } from '../../services/core/db/pool.js';
import { Results } from '../../services/core/results.js';
import { createLogger } from '../../services/core/telemetry/logger.js';
import { Claims } from '../../services/master/claims.js';
import { intercept } from '../helpers/intercept.js';
import { Stage } from './in-process.js';

const stage = await Stage.open();
afterAll(() => stage.close());

/** The pool, counting its transactions. */
function countingTx(pool: ConnectionPool) {
  const seen = { tx: 0 };
  const tx = <T>(fn: (q: Queryable) => Promise<T>) => {
    seen.tx++;
    return pool.tx(fn);
  };
  return { pool: intercept(pool, { tx }), seen };
}

it('renews every held claim in one transaction, and one by one when one of them is gone', async () => {
  await transact(stage.ctx, (tx) => findBuilderId(tx, 'renewed'));
  const brids: number[] = [];
  for (let i = 0; i < 3; i++) brids.push((await stage.request('renewed')).brid);
  const masterid = await transact(stage.ctx, async (tx) => {
    const id = await masterActive(tx, 'renewing');
    expect(await claimBuildRequests(tx, brids, id, 1)).toBe(true);
    return id;
  });
  const counted = countingTx(stage.db.pool);
  const claims = new Claims({
    ctx: { ...stage.ctx, db: counted.pool },
    masterid: () => masterid,
    log: createLogger('claims-renewal', 'silent'),
  });
  const lost: number[] = [];
  for (const brid of brids) claims.hold(brid, () => lost.push(brid));
  const claimedAt = async (of: number[]) =>
    (
      await stage.db.pool.query(
        sql`SELECT brid, claimed_at FROM buildrequest_claims WHERE brid = ANY(${of}::int[]) ORDER BY brid`,
      )
    ).map((r) => Number(r.claimed_at));

  await claims.renew();
  expect(counted.seen.tx).toBe(1);
  expect(await claimedAt(brids)).toEqual(brids.map(() => expect.toSatisfy((at: number) => at > 1)));
  expect(lost).toEqual([]);

  // The first request completed behind the master's back: only its build hears of it.
  await stage.db.pool.query(
    sql`UPDATE buildrequest_claims SET claimed_at = 1 WHERE brid = ANY(${brids}::int[])`,
  );
  await transact(stage.ctx, (tx) => completeBuildRequests(tx, [brids[0]!], Results.SUCCESS, masterid));
  counted.seen.tx = 0;
  await claims.renew();
  expect(lost).toEqual([brids[0]]);
  expect(counted.seen.tx).toBe(1 + brids.length);
  const others = brids.slice(1);
  expect(await claimedAt(others)).toEqual(others.map(() => expect.toSatisfy((at: number) => at > 1)));
});
