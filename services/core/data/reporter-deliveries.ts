// Reporters' delivery state (migration 0011): for each reporter and build request, the latest
// event delivered and who is delivering now.
//
// A request's events have positions in the order they happen: the request's `new` first, then
// each build's `new` and `finished` (a retried request has several builds; build ids grow), a
// cancel last. A report is sent only when its position is after the one delivered, and one at
// a time per (reporter, request): claimDelivery takes a lease (database time, so masters'
// clocks need not agree), completeDelivery records the position and lets go, releaseDelivery
// lets go after a failed attempt. A holder that dies loses its lease when it expires.
import { many, type Queryable, sql } from '../db/pool.js';
import { build } from '../entities/build.js';
import { type EntityJson, entities } from './entities.js';

/** Positions of a request's events (see the header). */
export const deliveryPosition = {
  requestNew: 1,
  buildNew: (buildid: number) => buildid * 4 + 2,
  buildFinished: (buildid: number) => buildid * 4 + 3,
  requestCancel: Number.MAX_SAFE_INTEGER,
} as const;

export interface DeliveryKey {
  reporter: string;
  buildrequestid: number;
}

/**
 * `claimed`: deliver now, then complete or release. `superseded`: this event or a later one
 * was delivered already; nothing to send. `busy`: another delivery for the request is under
 * way; try again shortly.
 */
export type DeliveryClaim = 'claimed' | 'superseded' | 'busy';

export async function claimDelivery(
  q: Queryable,
  key: DeliveryKey,
  position: number,
  holder: string,
  leaseSeconds: number,
): Promise<DeliveryClaim> {
  const taken = await q.query(sql`
    INSERT INTO flotilla.reporter_deliveries AS d (reporter, buildrequestid, holder, leased_until)
    VALUES (${key.reporter}, ${key.buildrequestid}, ${holder}, now() + ${leaseSeconds} * interval '1 second')
    ON CONFLICT (reporter, buildrequestid) DO UPDATE
      SET holder = excluded.holder, leased_until = excluded.leased_until, updated_at = now()
      WHERE d.position < ${position}
        AND (d.leased_until IS NULL OR d.leased_until < now() OR d.holder = excluded.holder)
    RETURNING 1 AS ok`);
  if (taken.length > 0) return 'claimed';
  const [row] = await q.query(sql`
    SELECT position FROM flotilla.reporter_deliveries
    WHERE reporter = ${key.reporter} AND buildrequestid = ${key.buildrequestid}`);
  return row && Number(row.position) >= position ? 'superseded' : 'busy';
}

/** The event at `position` was delivered: record it, and end the lease if still ours. */
export async function completeDelivery(
  q: Queryable,
  key: DeliveryKey,
  position: number,
  holder: string,
): Promise<void> {
  await q.query(sql`
    UPDATE flotilla.reporter_deliveries
    SET position = greatest(position, ${position}),
        leased_until = CASE WHEN holder = ${holder} THEN NULL ELSE leased_until END,
        holder = CASE WHEN holder = ${holder} THEN NULL ELSE holder END,
        updated_at = now()
    WHERE reporter = ${key.reporter} AND buildrequestid = ${key.buildrequestid}`);
}

/** The attempt failed: end the lease (if still ours) without recording anything. */
export async function releaseDelivery(q: Queryable, key: DeliveryKey, holder: string): Promise<void> {
  await q.query(sql`
    UPDATE flotilla.reporter_deliveries SET holder = NULL, leased_until = NULL, updated_at = now()
    WHERE reporter = ${key.reporter} AND buildrequestid = ${key.buildrequestid} AND holder = ${holder}`);
}

/** The latest position delivered for the request (0 when none). */
export async function deliveredPosition(q: Queryable, key: DeliveryKey): Promise<number> {
  const [row] = await q.query(sql`
    SELECT position FROM flotilla.reporter_deliveries
    WHERE reporter = ${key.reporter} AND buildrequestid = ${key.buildrequestid}`);
  return row ? Number(row.position) : 0;
}

/**
 * Builds finished whose end this reporter has not delivered, on requests whose delivery state
 * it touched in the last `withinSeconds` (a request it never reported, such as one of a
 * database adopted from Buildbot, is not reported late): the entities of the newest `limit`,
 * oldest first. What catch-up (master/reporters/catch-up.ts) queues jobs for.
 */
export async function finishedBuildsNotDelivered(
  q: Queryable,
  reporter: string,
  withinSeconds: number,
  limit: number,
): Promise<EntityJson[]> {
  const rows = await many<{ id: number }>(
    q,
    sql`
    SELECT b.id FROM flotilla.reporter_deliveries d
    JOIN builds b ON b.buildrequestid = d.buildrequestid
    WHERE d.reporter = ${reporter}
      AND d.updated_at > now() - ${withinSeconds} * interval '1 second'
      AND b.complete_at IS NOT NULL
      AND d.position < b.id::bigint * 4 + 3
    ORDER BY b.id DESC LIMIT ${limit}`,
  );
  return entities(
    q,
    build,
    rows.map((r) => r.id),
  );
}
