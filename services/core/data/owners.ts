// What authorization asks of the data: the builder that a build, build request, step, log,
// test result set or artifact belongs to, and the owner of a build request (the `owner`
// property of its build set, as Buildbot's authz reads it). Builders never change for these
// rows, so callers may keep the answers (services/api/auth/targets.ts does, bounded).
import { maybeOne, type Queryable, sql } from '../db/pool.js';

export type BuilderOwned = 'build' | 'buildrequest' | 'step' | 'log' | 'test_result_set' | 'artifact';

/** The id of the builder the row belongs to; null when there is no such row. */
export async function owningBuilderId(q: Queryable, kind: BuilderOwned, id: number): Promise<number | null> {
  const query = {
    build: sql`SELECT builderid FROM builds WHERE id = ${id}`,
    buildrequest: sql`SELECT builderid FROM buildrequests WHERE id = ${id}`,
    step: sql`SELECT b.builderid FROM steps s JOIN builds b ON b.id = s.buildid WHERE s.id = ${id}`,
    log: sql`SELECT b.builderid FROM logs l JOIN steps s ON s.id = l.stepid
             JOIN builds b ON b.id = s.buildid WHERE l.id = ${id}`,
    test_result_set: sql`SELECT builderid FROM test_result_sets WHERE id = ${id}`,
    // Finished or not: an upload being written is its builder's too (those who may see the
    // builder get 404 for it, others 403, as for a finished one). A new upload of the same
    // name is a new row, so an id's builder never changes.
    artifact: sql`SELECT b.builderid FROM flotilla.artifacts a JOIN builds b ON b.id = a.buildid
                  WHERE a.id = ${id}`,
  }[kind];
  return (await maybeOne<{ builderid: number }>(q, query))?.builderid ?? null;
}

/** A build's builder (by name) and request; undefined when there is no such build. */
export async function buildOwnership(
  q: Queryable,
  buildid: number,
): Promise<{ builder: string; buildrequestid: number } | undefined> {
  return maybeOne(
    q,
    sql`SELECT bl.name AS builder, b.buildrequestid FROM builds b JOIN builders bl ON bl.id = b.builderid
        WHERE b.id = ${buildid}`,
  );
}

/** A build request's builder, by name; null when there is no such request. */
export async function buildRequestBuilder(q: Queryable, brid: number): Promise<string | null> {
  const row = await maybeOne<{ name: string }>(
    q,
    sql`SELECT bl.name FROM buildrequests br JOIN builders bl ON bl.id = br.builderid WHERE br.id = ${brid}`,
  );
  return row?.name ?? null;
}

/** The `owner` property of a build request's build set: its value when it is a string, else null. */
export async function buildRequestOwner(q: Queryable, brid: number): Promise<string | null> {
  const row = await maybeOne<{ property_value: string }>(
    q,
    sql`SELECT p.property_value FROM buildrequests br
        JOIN buildset_properties p ON p.buildsetid = br.buildsetid AND p.property_name = 'owner'
        WHERE br.id = ${brid}`,
  );
  if (!row) return null;
  try {
    const v = JSON.parse(row.property_value);
    return Array.isArray(v) && typeof v[0] === 'string' ? v[0] : null;
  } catch {
    return null;
  }
}
