// Locks as core/data/locks.ts keeps them, against a real database: Buildbot's availability
// rules (counting up to maxCount, exclusive alone, count 0 always), its FIFO queue (an
// exclusive waiter is not starved by counting newcomers), all-or-nothing over several locks,
// holders of a master that is not active not counted, and a dead master's locks let go by
// its expiry; concurrent attempts from many connections never exceed maxCount.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AcquireOutcome,
  expireMasters,
  type LockRequest,
  lockHolders,
  masterActive,
  releaseLocks,
  transact,
  tryAcquireLocks,
  type WaitingPlace,
} from '../../../services/core/data/index.js';
import { sql } from '../../../services/core/db/pool.js';
import { type Harness, openHarness, uniq } from './harness.js';

let h: Harness;
let m1: number;
let m2: number;
beforeAll(async () => {
  h = await openHarness();
  m1 = await h.run((tx) => masterActive(tx, uniq('lock-master')));
  m2 = await h.run((tx) => masterActive(tx, uniq('lock-master')));
});
afterAll(() => h?.close());

const req = (lock: string, mode: 'counting' | 'exclusive', maxCount = 2, count = 1): LockRequest => ({
  lock,
  worker: '',
  mode,
  count,
  maxCount,
});

function attempt(rs: LockRequest[], masterid: number, holder: string, place: WaitingPlace | null = null) {
  return h.run((tx) => tryAcquireLocks(tx, rs, { masterid, holder }, place));
}

const held = (o: AcquireOutcome) => ('held' in o ? o.held : null);
const waiting = (o: AcquireOutcome) => ('waiting' in o ? o.waiting : null);

describe('one lock', () => {
  it('counts up to maxCount; count 0 always passes', async () => {
    const l = uniq('count');
    const a = held(await attempt([req(l, 'counting')], m1, 'a'));
    const b = held(await attempt([req(l, 'counting')], m2, 'b'));
    expect(a).toHaveLength(1);
    expect(b).toHaveLength(1);
    expect(waiting(await attempt([req(l, 'counting')], m1, 'c'))).toMatchObject({ lock: l });
    expect(held(await attempt([req(l, 'counting', 2, 0)], m1, 'zero'))).toEqual([]);
    expect((await lockHolders(h.db.pool, l)).map((x) => x.holder)).toEqual(['a', 'b']);
  });

  it('an exclusive waiter goes before counting newcomers (Buildbot FIFO)', async () => {
    const l = uniq('fifo');
    const a = held(await attempt([req(l, 'counting')], m1, 'a'))!;
    const e = waiting(await attempt([req(l, 'exclusive')], m1, 'e'))!;
    // There is room for a counting unit, but the exclusive waiter is ahead.
    const c = waiting(await attempt([req(l, 'counting')], m2, 'c'))!;
    expect(waiting(await attempt([req(l, 'exclusive')], m1, 'e', e))).toEqual(e);
    await h.run((tx) => releaseLocks(tx, a));
    const eh = held(await attempt([req(l, 'exclusive')], m1, 'e', e))!;
    expect(waiting(await attempt([req(l, 'counting')], m2, 'c', c))).toEqual(c);
    await h.run((tx) => releaseLocks(tx, eh));
    expect(held(await attempt([req(l, 'counting')], m2, 'c', c))).toHaveLength(1);
    expect(await h.tap.keys(`control/locks/${l}/`)).toEqual([
      `control/locks/${l}/released`,
      `control/locks/${l}/released`,
    ]);
  });

  it('several locks are taken all at once or not at all', async () => {
    const [x, y] = [uniq('x'), uniq('y')];
    const yh = held(await attempt([req(y, 'exclusive')], m1, 'y-holder'))!;
    const w = waiting(await attempt([req(x, 'counting'), req(y, 'counting')], m2, 'both'))!;
    expect(w.lock).toBe(y);
    expect(await lockHolders(h.db.pool, x)).toEqual([]);
    await h.run((tx) => releaseLocks(tx, yh));
    expect(held(await attempt([req(x, 'counting'), req(y, 'counting')], m2, 'both', w))).toHaveLength(2);
  });
});

describe('masters that go away', () => {
  it("an inactive master's holders do not count, and its expiry lets them go", async () => {
    const l = uniq('dead');
    const gone = await h.run((tx) => masterActive(tx, uniq('doomed')));
    held(await attempt([req(l, 'exclusive')], gone, 'doomed-build'));
    const w = waiting(await attempt([req(l, 'exclusive')], m1, 'live'))!;
    expect(w).toMatchObject({ lock: l });
    // Silent for longer than the expiry: the housekeeping lets its locks go.
    await h.db.pool.query(sql`UPDATE masters SET last_active = last_active - 3600 WHERE id = ${gone}`);
    expect(await h.run((tx) => expireMasters(tx, 600, m1))).toContain(gone);
    expect(await lockHolders(h.db.pool, l)).toEqual([]);
    expect(held(await attempt([req(l, 'exclusive')], m1, 'live', w))).toHaveLength(1);
  });
});

describe('concurrent attempts', () => {
  it('from 16 connections at once never hold more than maxCount', async () => {
    const l = uniq('race');
    const outcomes = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        transact({ ...h.ctx, db: h.wide }, (tx) =>
          tryAcquireLocks(tx, [req(l, 'counting', 3)], { masterid: i % 2 ? m1 : m2, holder: `h${i}` }, null),
        ),
      ),
    );
    expect(outcomes.filter((o) => 'held' in o)).toHaveLength(3);
    expect(await lockHolders(h.db.pool, l)).toHaveLength(3);
  });
});
