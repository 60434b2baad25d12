// Workers: findWorkerId(s), workerConfigured (workersConfigured), workerConnected
// (workersConnected), workerDisconnected, workerMissing, setWorkerState,
// deconfigureAllWorkersForMaster.
//
// Buildbot facts (buildbot/db/workers.py, buildbot/data/workers.py):
// - a worker's name is a 50-character identifier; found or created by name (unique), with
//   info {} and neither paused nor graceful;
// - configured_workers links a worker to builder_masters rows: workerConfigured keeps exactly
//   the rows of the given builders on that master (no event); deconfiguring a master drops
//   all the rows of its builder_masters;
// - connected_workers (masterid, workerid) is unique: connecting twice is not an error; the
//   worker's info is replaced on connection (stored as JSON text);
// - events carry the worker entity under workers/<id>: connected, disconnected,
//   state_updated, and missing (entity plus last_connection and notify).
import { many, maybeOne, one, type Queryable, sql } from '../db/pool.js';
import { worker } from '../entities/worker.js';
import { invalid, noSuch } from '../errors.js';
import { workerKeys } from '../events/keys.js';
import { isIdentifier } from '../identifiers.js';
import { entities, entity } from './entities.js';
import type { Tx } from './transaction.js';

async function workerEntity(tx: Tx, workerid: number): Promise<Record<string, unknown>> {
  const w = await entity(tx.q, worker, workerid);
  if (!w) throw noSuch(`worker ${workerid}`);
  return w;
}

async function emit(
  tx: Tx,
  workerid: number,
  event: string,
  extra: Record<string, unknown> = {},
): Promise<void> {
  tx.out.addAll(workerKeys(workerid), event, { ...(await workerEntity(tx, workerid)), ...extra });
}

export async function findWorkerId(tx: Tx, name: string): Promise<number> {
  if (!isIdentifier(50, name))
    throw invalid(`worker name ${JSON.stringify(name)} is not a 50-character identifier`);
  const byName = sql`SELECT id FROM workers WHERE name = ${name}`;
  const found = await maybeOne<{ id: number }>(tx.q, byName);
  if (found) return found.id;
  const row = await maybeOne<{ id: number }>(
    tx.q,
    sql`INSERT INTO workers (name, info, paused, graceful) VALUES (${name}, '{}', 0, 0)
        ON CONFLICT (name) DO NOTHING RETURNING id`,
  );
  // Lost the race to another creator: theirs is committed and visible to a new statement.
  return (row ?? (await one<{ id: number }>(tx.q, byName))).id;
}

/** findWorkerId for many names in a few statements (a master's start): name -> id. */
export async function findWorkerIds(tx: Tx, names: readonly string[]): Promise<Map<string, number>> {
  const unique = [...new Set(names)];
  const bad = unique.find((n) => !isIdentifier(50, n));
  if (bad !== undefined) throw invalid(`worker name ${JSON.stringify(bad)} is not a 50-character identifier`);
  const read = async () =>
    new Map(
      (
        await many<{ id: number; name: string }>(
          tx.q,
          sql`SELECT id, name FROM workers WHERE name = ANY(${unique}::text[])`,
        )
      ).map((r) => [r.name, r.id]),
    );
  let byName = await read();
  const missing = unique.filter((n) => !byName.has(n));
  if (missing.length > 0) {
    // In the order given: ids in configuration order, as one by one.
    await tx.q.query(sql`
      INSERT INTO workers (name, info, paused, graceful)
      SELECT n, '{}', 0, 0 FROM unnest(${missing}::text[]) WITH ORDINALITY AS x(n, o) ORDER BY o
      ON CONFLICT (name) DO NOTHING`);
    byName = await read();
  }
  return byName;
}

/** The worker is configured on exactly these builders of `masterid`. */
export function workerConfigured(
  tx: Tx,
  workerid: number,
  masterid: number,
  builderids: readonly number[],
): Promise<void> {
  return workersConfigured(tx, masterid, new Map([[workerid, builderids]]));
}

/**
 * workerConfigured for many workers in two statements (a master's start: one per worker was
 * two round trips each, see updateBuilderList): each worker of the map is configured on
 * exactly its builders of `masterid`.
 */
export async function workersConfigured(
  tx: Tx,
  masterid: number,
  builderidsOf: ReadonlyMap<number, readonly number[]>,
): Promise<void> {
  const workerids = [...builderidsOf.keys()];
  const pairs = [...builderidsOf].flatMap(([w, bs]) => [...new Set(bs)].map((b) => [w, b] as const));
  const ws = pairs.map(([w]) => w);
  const bs = pairs.map(([, b]) => b);
  await tx.q.query(sql`
    DELETE FROM configured_workers cw USING builder_masters bm
    WHERE bm.id = cw.buildermasterid AND bm.masterid = ${masterid} AND cw.workerid = ANY(${workerids}::int[])
      AND NOT EXISTS (SELECT 1 FROM unnest(${ws}::int[], ${bs}::int[]) AS x(w, b)
                      WHERE x.w = cw.workerid AND x.b = bm.builderid)`);
  await tx.q.query(sql`
    INSERT INTO configured_workers (buildermasterid, workerid)
    SELECT bm.id, x.w FROM unnest(${ws}::int[], ${bs}::int[]) AS x(w, b)
    JOIN builder_masters bm ON bm.masterid = ${masterid} AND bm.builderid = x.b
    ORDER BY bm.id, x.w
    ON CONFLICT (buildermasterid, workerid) DO NOTHING`);
}

/** Drop every configured_workers row of the master's builders. */
export async function deconfigureAllWorkersForMaster(tx: Tx, masterid: number): Promise<void> {
  await tx.q.query(sql`
    DELETE FROM configured_workers cw USING builder_masters bm
    WHERE bm.id = cw.buildermasterid AND bm.masterid = ${masterid}`);
}

export async function workerConnected(
  tx: Tx,
  workerid: number,
  masterid: number,
  info: object,
): Promise<void> {
  const missing = await workersConnected(tx, masterid, [{ workerid, info }]);
  if (missing.length) throw noSuch(`worker ${workerid}`);
}

/**
 * workerConnected for many workers in three statements whatever their number; returns the
 * ids that name no worker (none of their rows written). A worker named twice keeps its last
 * info. Why: a master coming up with 333 workers logging in at once wrote 333 transactions of
 * five round trips each, and its first builds' statements queued behind them in its pool
 * (master/workers/connection-records.ts has the figures).
 */
export async function workersConnected(
  tx: Tx,
  masterid: number,
  connected: readonly { workerid: number; info: object }[],
): Promise<number[]> {
  const last = new Map(connected.map((c) => [c.workerid, JSON.stringify(c.info ?? {})]));
  if (last.size === 0) return [];
  // In id order: two masters' batches touching the same workers lock them in the same order.
  const ids = [...last.keys()].sort((a, b) => a - b);
  const updated = await many<{ id: number }>(
    tx.q,
    sql`UPDATE workers w SET info = x.info
        FROM unnest(${ids}::int[], ${ids.map((id) => last.get(id)!)}::text[]) AS x(id, info)
        WHERE w.id = x.id RETURNING w.id`,
  );
  const found = updated.map((r) => r.id).sort((a, b) => a - b);
  await tx.q.query(sql`INSERT INTO connected_workers (masterid, workerid)
                       SELECT ${masterid}, x.id FROM unnest(${found}::int[]) AS x(id) ORDER BY x.id
                       ON CONFLICT (masterid, workerid) DO NOTHING`);
  for (const w of await entities(tx.q, worker, found))
    tx.out.addAll(workerKeys(w.workerid as number), 'connected', w);
  const got = new Set(found);
  return ids.filter((id) => !got.has(id));
}

export async function workerDisconnected(tx: Tx, workerid: number, masterid: number): Promise<void> {
  await tx.q.query(
    sql`DELETE FROM connected_workers WHERE workerid = ${workerid} AND masterid = ${masterid}`,
  );
  await emit(tx, workerid, 'disconnected');
}

/** Disconnect every worker connected to `masterid` (a master that is gone); returns their ids. */
export async function disconnectAllWorkersForMaster(tx: Tx, masterid: number): Promise<number[]> {
  const rows = await many<{ workerid: number }>(
    tx.q,
    sql`DELETE FROM connected_workers WHERE masterid = ${masterid} RETURNING workerid`,
  );
  const ids = [...new Set(rows.map((r) => r.workerid))].sort((a, b) => a - b);
  for (const id of ids) await emit(tx, id, 'disconnected');
  return ids;
}

/** Only an event: the worker has not connected for a while (the notification is the caller's). */
export async function workerMissing(
  tx: Tx,
  workerid: number,
  lastConnection: string,
  notify: readonly string[],
): Promise<void> {
  await emit(tx, workerid, 'missing', { last_connection: lastConnection, notify });
}

export async function setWorkerState(
  tx: Tx,
  workerid: number,
  paused: boolean,
  graceful: boolean,
): Promise<void> {
  const updated = await maybeOne<{ id: number }>(
    tx.q,
    sql`UPDATE workers SET paused = ${paused ? 1 : 0}, graceful = ${graceful ? 1 : 0} WHERE id = ${workerid} RETURNING id`,
  );
  if (!updated) throw noSuch(`worker ${workerid}`);
  await emit(tx, workerid, 'state_updated');
}

/** Which of these workers an operator has paused (a master starting up honours it). */
export async function pausedWorkerNames(q: Queryable, names: readonly string[]): Promise<string[]> {
  const rows = await many<{ name: string }>(
    q,
    sql`SELECT name FROM workers WHERE paused <> 0 AND name = ANY(${[...names]}::text[])`,
  );
  return rows.map((r) => r.name);
}
