// Locks: Buildbot's MasterLock and WorkerLock, held cluster-wide in PostgreSQL
// (migration 0013 has the tables).
//
// Why PostgreSQL and not Redis: a holder is a build of some master, and whether that master
// is alive is already decided in PostgreSQL (its `masters` row, its heartbeat, its expiry with
// the housekeeping that hands its builds back). Holders kept beside it are freed by the same
// rule, in the same transaction as the rest of a dead master's housekeeping, and a master
// that is no longer active stops counting at once. Taking several locks is all or nothing
// and each instance's queue must stay in order; a transaction serialized per instance gives
// both without a script, and nothing is lost when Redis is.
//
// Buildbot's rules (buildbot/locks.py BaseLock.isAvailable), per lock instance:
// - an access with count 0 is always granted;
// - a counting access is granted when no exclusive access is held, and the counting units
//   held, plus those of every waiter ahead of it, plus its own, are at most maxCount, and
//   every waiter ahead of it is counting (an exclusive waiter is never starved);
// - an exclusive access is granted when nothing is held and nobody waits ahead of it;
// - a build or step takes all its locks at once, or none, and waits in the queue of the
//   first lock it could not have.
// Every attempt on an instance first takes a transaction-scoped advisory lock on it, so two
// masters deciding about one instance decide one after the other.
import { many, maybeOne, type Queryable, sql } from '../db/pool.js';
import { now, type Tx } from './transaction.js';

export type LockMode = 'counting' | 'exclusive';

export interface LockRequest {
  lock: string;
  /** The worker of a worker lock's instance; '' for a master lock. */
  worker: string;
  mode: LockMode;
  count: number;
  /** The instance's maxCount (a worker lock's maxCountForWorker of that worker). */
  maxCount: number;
}

export interface LockHolder {
  masterid: number;
  /** Who takes it, for people reading the tables: `build 12`, `step 345`. */
  holder: string;
}

/** The event a release (or a waiter leaving) publishes: waiters of that lock look again. */
export const lockReleasedKey = (lock: string) => ['control', 'locks', lock, 'released'] as const;

// Lock and worker names are identifiers: "/" is in neither.
const instanceKey = (r: { lock: string; worker: string }) => `${r.lock}/${r.worker}`;

async function serialize(tx: Tx, requests: readonly LockRequest[]): Promise<void> {
  const keys = [...new Set(requests.map(instanceKey))].sort();
  // In one order everywhere, so two attempts on overlapping sets cannot deadlock.
  for (const k of keys)
    await tx.q.query(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`flotilla.lock/${k}`}, 0))`);
}

interface Held {
  counting: number;
  exclusive: number;
}

async function held(q: Queryable, r: LockRequest): Promise<Held> {
  const row = await maybeOne<Held>(
    q,
    sql`
    SELECT coalesce(sum(h.count) FILTER (WHERE h.mode = 'counting'), 0)::int AS counting,
           (count(*) FILTER (WHERE h.mode = 'exclusive'))::int AS exclusive
    FROM flotilla.lock_holders h JOIN masters m ON m.id = h.masterid AND m.active <> 0
    WHERE h.lock_name = ${r.lock} AND h.worker_name = ${r.worker}`,
  );
  return row ?? { counting: 0, exclusive: 0 };
}

/** Waiters of live masters queued before `before` (all of them when null), in order. */
function waitersAhead(
  q: Queryable,
  r: LockRequest,
  before: number | null,
): Promise<{ mode: LockMode; count: number }[]> {
  return many(
    q,
    sql`
    SELECT w.mode, w.count FROM flotilla.lock_waiters w JOIN masters m ON m.id = w.masterid AND m.active <> 0
    WHERE w.lock_name = ${r.lock} AND w.worker_name = ${r.worker} AND (${before}::bigint IS NULL OR w.seq < ${before}::bigint)
    ORDER BY w.seq`,
  );
}

async function available(q: Queryable, r: LockRequest, before: number | null): Promise<boolean> {
  if (r.count === 0) return true;
  const h = await held(q, r);
  const ahead = await waitersAhead(q, r, before);
  if (r.mode === 'exclusive') return h.exclusive === 0 && h.counting === 0 && ahead.length === 0;
  const queued = ahead.reduce((n, w) => n + w.count, 0);
  return (
    h.exclusive === 0 &&
    h.counting + queued + r.count <= r.maxCount &&
    ahead.every((w) => w.mode === 'counting')
  );
}

export interface WaitingPlace {
  seq: number;
  lock: string;
  worker: string;
}

export type AcquireOutcome = { held: number[] } | { waiting: WaitingPlace };

/**
 * Take every lock of `requests`, or none: `held` are the holder rows to release later;
 * otherwise the caller waits in the queue of the first lock it could not have (`waiting`,
 * which it passes back as `place` when it tries again, or to leaveLockQueue when it gives up).
 */
export async function tryAcquireLocks(
  tx: Tx,
  requests: readonly LockRequest[],
  who: LockHolder,
  place: WaitingPlace | null,
): Promise<AcquireOutcome> {
  await serialize(tx, requests);
  let blocked: LockRequest | null = null;
  for (const r of requests) {
    const mine = place && instanceKey(place) === instanceKey(r) ? place.seq : null;
    if (!(await available(tx.q, r, mine))) {
      blocked = r;
      break;
    }
  }
  if (!blocked) {
    if (place) await tx.q.query(sql`DELETE FROM flotilla.lock_waiters WHERE seq = ${place.seq}`);
    const ids: number[] = [];
    for (const r of requests) {
      if (r.count === 0) continue;
      const row = await maybeOne<{ id: number }>(
        tx.q,
        sql`
        INSERT INTO flotilla.lock_holders (lock_name, worker_name, mode, count, masterid, holder, acquired_at)
        VALUES (${r.lock}, ${r.worker}, ${r.mode}, ${r.count}, ${who.masterid}, ${who.holder}, ${now()})
        RETURNING id`,
      );
      ids.push(row!.id);
    }
    return { held: ids };
  }
  if (place && instanceKey(place) === instanceKey(blocked)) return { waiting: place };
  if (place) await tx.q.query(sql`DELETE FROM flotilla.lock_waiters WHERE seq = ${place.seq}`);
  const row = await maybeOne<{ seq: number }>(
    tx.q,
    sql`
    INSERT INTO flotilla.lock_waiters (lock_name, worker_name, mode, count, masterid, holder, queued_at)
    VALUES (${blocked.lock}, ${blocked.worker}, ${blocked.mode}, ${blocked.count}, ${who.masterid}, ${who.holder}, ${now()})
    RETURNING seq`,
  );
  return { waiting: { seq: row!.seq, lock: blocked.lock, worker: blocked.worker } };
}

function announce(tx: Tx, locks: Iterable<string>): void {
  for (const lock of new Set(locks)) tx.out.add(lockReleasedKey(lock), {});
}

/** Release what tryAcquireLocks granted; the locks' waiters hear of it after commit. */
export async function releaseLocks(tx: Tx, holderIds: readonly number[]): Promise<void> {
  if (holderIds.length === 0) return;
  const rows = await many<{ lock_name: string }>(
    tx.q,
    sql`DELETE FROM flotilla.lock_holders WHERE id = ANY(${holderIds}::bigint[]) RETURNING lock_name`,
  );
  announce(
    tx,
    rows.map((r) => r.lock_name),
  );
}

/** Give up a place in a queue (the waiter was stopped); those behind it may now go. */
export async function leaveLockQueue(tx: Tx, place: WaitingPlace): Promise<void> {
  await tx.q.query(sql`DELETE FROM flotilla.lock_waiters WHERE seq = ${place.seq}`);
  announce(tx, [place.lock]);
}

/** A master is gone (its housekeeping): every lock it held, or waited for, is let go. */
export async function releaseMasterLocks(tx: Tx, masterid: number): Promise<void> {
  const rows = await many<{ lock_name: string }>(
    tx.q,
    sql`
    WITH h AS (DELETE FROM flotilla.lock_holders WHERE masterid = ${masterid} RETURNING lock_name),
         w AS (DELETE FROM flotilla.lock_waiters WHERE masterid = ${masterid} RETURNING lock_name)
    SELECT lock_name FROM h UNION SELECT lock_name FROM w`,
  );
  announce(
    tx,
    rows.map((r) => r.lock_name),
  );
}

/** The holders of a lock's instances now, for metrics and tests. */
export function lockHolders(
  q: Queryable,
  lock: string,
): Promise<{ worker_name: string; mode: LockMode; count: number; masterid: number; holder: string }[]> {
  return many(
    q,
    sql`
    SELECT worker_name, mode, count, masterid, holder FROM flotilla.lock_holders
    WHERE lock_name = ${lock} ORDER BY id`,
  );
}
