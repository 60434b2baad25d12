// Reporters' delivery state: a position is delivered once, never after a later one, one
// delivery at a time per (reporter, request), and a lease its holder never gave back (a
// killed master) frees the request once it expires.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  claimDelivery,
  completeDelivery,
  deliveredPosition,
  deliveryPosition,
  releaseDelivery,
} from '../../../services/core/data/index.js';
import { sql } from '../../../services/core/db/pool.js';
import { type Harness, openHarness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => {
  await h?.close();
});

let brid = 1000;
const key = () => ({ reporter: 'github', buildrequestid: ++brid });

describe('reporter deliveries', () => {
  it('orders a request: pending, then each build started and finished, the cancel last', () => {
    const order = [
      deliveryPosition.requestNew,
      deliveryPosition.buildNew(7),
      deliveryPosition.buildFinished(7),
      deliveryPosition.buildNew(9),
      deliveryPosition.buildFinished(9),
      deliveryPosition.requestCancel,
    ];
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('delivers each position once, and nothing older than what was delivered', async () => {
    const db = h.db.pool;
    const k = key();
    const finished = deliveryPosition.buildFinished(5);
    expect(await claimDelivery(db, k, finished, 'job-finished', 60)).toBe('claimed');
    await completeDelivery(db, k, finished, 'job-finished');
    expect(await deliveredPosition(db, k)).toBe(finished);
    // The start, retried late, and the finish again: both superseded.
    expect(await claimDelivery(db, k, deliveryPosition.buildNew(5), 'job-new', 60)).toBe('superseded');
    expect(await claimDelivery(db, k, finished, 'job-finished', 60)).toBe('superseded');
    // Another reporter keeps its own state.
    expect(await claimDelivery(db, { ...k, reporter: 'mail' }, deliveryPosition.buildNew(5), 'j', 60)).toBe(
      'claimed',
    );
  });

  it('lets one holder at a time deliver; a released or expired lease frees the request', async () => {
    const db = h.db.pool;
    const k = key();
    expect(await claimDelivery(db, k, deliveryPosition.requestNew, 'pending', 60)).toBe('claimed');
    expect(await claimDelivery(db, k, deliveryPosition.buildNew(3), 'started', 60)).toBe('busy');
    // The same job, retried (another master), takes its lease back.
    expect(await claimDelivery(db, k, deliveryPosition.requestNew, 'pending', 60)).toBe('claimed');
    await releaseDelivery(db, k, 'pending');
    expect(await deliveredPosition(db, k)).toBe(0);
    expect(await claimDelivery(db, k, deliveryPosition.buildNew(3), 'started', 60)).toBe('claimed');
    // Its holder dies: once the lease is past, another event's job goes ahead.
    await db.query(sql`
      UPDATE flotilla.reporter_deliveries SET leased_until = now() - interval '1 second'
      WHERE reporter = ${k.reporter} AND buildrequestid = ${k.buildrequestid}`);
    expect(await claimDelivery(db, k, deliveryPosition.buildFinished(3), 'finished', 60)).toBe('claimed');
    // The dead holder's late completion does not take the new holder's lease away.
    await completeDelivery(db, k, deliveryPosition.buildNew(3), 'started');
    expect(await claimDelivery(db, k, deliveryPosition.requestCancel, 'cancel', 60)).toBe('busy');
    await completeDelivery(db, k, deliveryPosition.buildFinished(3), 'finished');
    expect(await deliveredPosition(db, k)).toBe(deliveryPosition.buildFinished(3));
  });
});
