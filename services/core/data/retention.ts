// Retention: the deletes the retention job (services/master/jobs/retention.ts) runs, one
// bounded batch per call. Each function is one statement, run by the caller in a short
// transaction of its own; it touches at most `limit` rows of the table it names (its
// contract, tested in test/core/data/retention.test.ts), picked in primary-key order.
//
// What keeps them out of everyone's way (issue 33; Buildbot's janitor deleted every old log
// chunk in one statement and held the database for hours, buildbot/buildbot#4926):
// - only finished things: builds with complete_at set, logs with complete set, requests and
//   build sets complete. A running build, its steps and logs, and a pending or claimed
//   request are never selected, so no claim, build write or log append ever waits on a row
//   these statements lock;
// - rows are locked FOR UPDATE SKIP LOCKED: a row somebody else holds is left for the next
//   batch rather than waited for; readers never wait on row locks;
// - no table lock, no TRUNCATE. The statement triggers of migrations 0004, 0007 and 0016 see
//   the deletes like any other: the kept totals (meta.total), the write versions and the
//   page cache's notices stay exact.
//
// A deleted log is Buildbot's: its row stays, its type becomes 'd' and its chunks go
// (Buildbot 3.7's deleteOldLogChunks; the schema and the REST shape are unchanged, and a
// client sees `type: "d"` with num_lines as it was). An artifact's large object is unlinked
// by its row's trigger (migration 0014), in the same transaction as the row.
import { many, type Queryable, sql } from '../db/pool.js';

/**
 * Which finished builds of one builder a batch may take: those completed before `before`
 * (seconds since the epoch; 0 for none), and those with an id up to `upToId` (the builds past
 * the builder's maximum count; 0 for none).
 */
export interface BuildSelection {
  builderid: number;
  before: number;
  upToId: number;
}

function checkLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit <= 0) throw new RangeError(`not a batch size: ${limit}`);
}

/**
 * Marks up to `limit` finished logs of the selected builds deleted (type 'd'), as Buildbot's
 * janitor does before it deletes their chunks; their ids, in order. Logs marked already
 * (by us or by a Buildbot master sharing the database) are not selected again.
 */
export async function markLogsDeleted(q: Queryable, sel: BuildSelection, limit: number): Promise<number[]> {
  checkLimit(limit);
  const rows = await many<{ id: number }>(
    q,
    sql`UPDATE logs SET type = 'd' WHERE id IN (
          SELECT l.id FROM builds b JOIN steps s ON s.buildid = b.id JOIN logs l ON l.stepid = s.id
          WHERE b.builderid = ${sel.builderid} AND b.complete_at IS NOT NULL
            AND (b.complete_at < ${sel.before} OR b.id <= ${sel.upToId})
            AND l.complete <> 0 AND l.type <> 'd'
          ORDER BY l.id LIMIT ${limit} FOR UPDATE OF l SKIP LOCKED)
        RETURNING id`,
  );
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

/**
 * Up to `limit` logs marked deleted that still have chunks, with ids above `after` (a
 * cursor: pass the last id of the previous page). Finds the chunks a run cut short left.
 */
export async function deletedLogsWithChunks(q: Queryable, after: number, limit: number): Promise<number[]> {
  checkLimit(limit);
  const rows = await many<{ id: number }>(
    q,
    sql`SELECT l.id FROM logs l
        WHERE l.type = 'd' AND l.id > ${after}
          AND EXISTS (SELECT 1 FROM logchunks c WHERE c.logid = l.id)
        ORDER BY l.id LIMIT ${limit}`,
  );
  return rows.map((r) => r.id);
}

/**
 * Deletes up to `limit` chunks of these logs, those marked deleted only, in (logid,
 * first_line) order (logchunks has no primary key; that pair is its index and identifies a
 * chunk). How many went. Several logs a statement: logs of a few chunks each would
 * otherwise cost a transaction each (measured, load/bench/retention/run.ts: 10,000 logs of 10
 * chunks took 131 s one log a statement).
 */
export async function deleteLogChunks(
  q: Queryable,
  logids: readonly number[],
  limit: number,
): Promise<number> {
  checkLimit(limit);
  if (logids.length === 0) return 0;
  const rows = await many(
    q,
    sql`DELETE FROM logchunks c USING (
          SELECT c2.logid, c2.first_line FROM logchunks c2 JOIN logs l ON l.id = c2.logid
          WHERE c2.logid = ANY(${logids}::int[]) AND l.type = 'd'
          ORDER BY c2.logid, c2.first_line LIMIT ${limit} FOR UPDATE OF c2 SKIP LOCKED) x
        WHERE c.logid = x.logid AND c.first_line = x.first_line
        RETURNING 1 AS ok`,
  );
  return rows.length;
}

/** Deletes up to `limit` artifacts of the selected builds, their large objects with them. */
export async function deleteArtifacts(
  q: Queryable,
  sel: BuildSelection,
  limit: number,
): Promise<{ count: number; bytes: number }> {
  checkLimit(limit);
  const rows = await many<{ length: number }>(
    q,
    sql`DELETE FROM flotilla.artifacts WHERE id IN (
          SELECT a.id FROM builds b JOIN flotilla.artifacts a ON a.buildid = b.id
          WHERE b.builderid = ${sel.builderid} AND b.complete_at IS NOT NULL
            AND (b.complete_at < ${sel.before} OR b.id <= ${sel.upToId})
          ORDER BY a.id LIMIT ${limit} FOR UPDATE OF a SKIP LOCKED)
        RETURNING length`,
  );
  return { count: rows.length, bytes: rows.reduce((s, r) => s + Number(r.length), 0) };
}

/** Deletes up to `limit` build_data rows of the selected builds (Buildbot's deleteOldBuildData). */
export async function deleteBuildData(q: Queryable, sel: BuildSelection, limit: number): Promise<number> {
  checkLimit(limit);
  const rows = await many(
    q,
    sql`DELETE FROM build_data WHERE id IN (
          SELECT d.id FROM builds b JOIN build_data d ON d.buildid = b.id
          WHERE b.builderid = ${sel.builderid} AND b.complete_at IS NOT NULL
            AND (b.complete_at < ${sel.before} OR b.id <= ${sel.upToId})
          ORDER BY d.id LIMIT ${limit} FOR UPDATE OF d SKIP LOCKED)
        RETURNING 1 AS ok`,
  );
  return rows.length;
}

/**
 * Deletes up to `limit` selected builds, with their steps, logs, properties and build data
 * (ON DELETE CASCADE). Only builds whose log chunks and artifacts are gone already are
 * taken, so what cascades is a few rows per step, never a log's millions of chunks: the
 * job deletes those first, in batches of their own.
 *
 * The chunks' check is a subquery per build (OFFSET 0 keeps PostgreSQL from turning it into
 * an anti join). As a join, right after a run had deleted 1,000,000 chunks and before
 * autovacuum analyzed logchunks, the planner walked every step, log and chunk of the
 * database in build order for each batch: 2,392 ms a batch of 100 builds on the real-masters
 * benchmark (load/bench/retention/masters.ts, 100,000 builds; EXPLAIN ANALYZE), 4.9 ms as a
 * subquery per build, on the same database at the same moment.
 */
export async function deleteBuilds(q: Queryable, sel: BuildSelection, limit: number): Promise<number[]> {
  checkLimit(limit);
  const rows = await many<{ id: number }>(
    q,
    sql`DELETE FROM builds WHERE id IN (
          SELECT b.id FROM builds b
          WHERE b.builderid = ${sel.builderid} AND b.complete_at IS NOT NULL
            AND (b.complete_at < ${sel.before} OR b.id <= ${sel.upToId})
            AND NOT EXISTS (SELECT 1 FROM steps s JOIN logs l ON l.stepid = s.id
                            JOIN logchunks c ON c.logid = l.id WHERE s.buildid = b.id OFFSET 0)
            AND NOT EXISTS (SELECT 1 FROM flotilla.artifacts a WHERE a.buildid = b.id)
          ORDER BY b.id LIMIT ${limit} FOR UPDATE OF b SKIP LOCKED)
        RETURNING id`,
  );
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

/**
 * The id of the newest build of a builder that falls past its `keep` newest (builds are
 * numbered in id order on a builder); 0 when it has `keep` builds or fewer.
 */
export async function excessBuildsUpTo(q: Queryable, builderid: number, keep: number): Promise<number> {
  if (!Number.isSafeInteger(keep) || keep < 0) throw new RangeError(`not a count: ${keep}`);
  const rows = await many<{ id: number }>(
    q,
    sql`SELECT id FROM builds WHERE builderid = ${builderid} ORDER BY number DESC OFFSET ${keep} LIMIT 1`,
  );
  return rows[0]?.id ?? 0;
}

/**
 * Deletes up to `limit` complete build requests finished before `before` that no build
 * refers to any more (deleting a request would take its builds with it: builds.buildrequestid
 * cascades). Claims go with them.
 */
export async function deleteBuildRequests(q: Queryable, before: number, limit: number): Promise<number> {
  checkLimit(limit);
  const rows = await many(
    q,
    sql`DELETE FROM buildrequests WHERE id IN (
          SELECT r.id FROM buildrequests r
          WHERE r.complete <> 0 AND r.complete_at < ${before}
            AND NOT EXISTS (SELECT 1 FROM builds b WHERE b.buildrequestid = r.id)
          ORDER BY r.id LIMIT ${limit} FOR UPDATE OF r SKIP LOCKED)
        RETURNING 1 AS ok`,
  );
  return rows.length;
}

/** Deletes up to `limit` complete build sets finished before `before` with no request left. */
export async function deleteBuildsets(q: Queryable, before: number, limit: number): Promise<number> {
  checkLimit(limit);
  const rows = await many(
    q,
    sql`WITH done AS (
          SELECT s.id FROM buildsets s
          WHERE s.complete <> 0 AND s.complete_at < ${before}
            AND NOT EXISTS (SELECT 1 FROM buildrequests r WHERE r.buildsetid = s.id)
          ORDER BY s.id LIMIT ${limit} FOR UPDATE OF s SKIP LOCKED)
        DELETE FROM buildsets USING done WHERE buildsets.id = done.id RETURNING 1 AS ok`,
  );
  return rows.length;
}

/** Deletes up to `limit` changes that happened before `before`, with their files, properties and users. */
export async function deleteChanges(q: Queryable, before: number, limit: number): Promise<number> {
  checkLimit(limit);
  const rows = await many(
    q,
    sql`DELETE FROM changes WHERE changeid IN (
          SELECT c.changeid FROM changes c WHERE c.when_timestamp < ${before}
          ORDER BY c.changeid LIMIT ${limit} FOR UPDATE OF c SKIP LOCKED)
        RETURNING 1 AS ok`,
  );
  return rows.length;
}

/** The builders with the names of their tags, for resolving per-builder and per-tag horizons. */
export async function buildersWithTags(
  q: Queryable,
): Promise<{ id: number; name: string; tags: string[] }[]> {
  return many(
    q,
    sql`SELECT b.id, b.name,
               coalesce(array_agg(t.name ORDER BY t.name) FILTER (WHERE t.name IS NOT NULL), '{}') AS tags
        FROM builders b LEFT JOIN builders_tags bt ON bt.builderid = b.id LEFT JOIN tags t ON t.id = bt.tagid
        GROUP BY b.id, b.name ORDER BY b.id`,
  );
}

/**
 * Deletes up to `limit` audit log rows written before `before` (seconds since the epoch),
 * oldest first. Nothing else refers to them and nobody updates them: no lock is waited on.
 */
export async function deleteAuditEntries(q: Queryable, before: number, limit: number): Promise<number> {
  checkLimit(limit);
  const rows = await many(
    q,
    sql`DELETE FROM flotilla.audit_log WHERE id IN (
          SELECT a.id FROM flotilla.audit_log a WHERE a.at < ${before}
          ORDER BY a.at, a.id LIMIT ${limit} FOR UPDATE OF a SKIP LOCKED)
        RETURNING 1 AS ok`,
  );
  return rows.length;
}
