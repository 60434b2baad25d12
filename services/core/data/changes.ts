// Changes: addChange.
//
// Buildbot facts (buildbot/data/changes.py addChange, buildbot/db/changes.py):
// - each property is stored as JSON [value, "Change"]; files in the order given;
// - repository, project and codebase default to '', revlink to '', when_timestamp to now;
// - the change's source stamp is found or created from (branch, revision, repository,
//   project, codebase) with no patch (ss_hash, sourcestamps.ts);
// - parent_changeids is the newest earlier change with the same branch (NULL matching
//   NULL), repository, project and codebase, or NULL;
// - with `src` naming a version-control system, the author becomes a user (users.ts) and a
//   change_users row links them;
// - the event changes/<id>/new carries the change entity.
// Two changes of one branch added at once would both take the same parent in Buildbot; we
// serialize them on a transaction lock keyed by the branch's identity, so the chain stays
// linear. Values too long for their column are refused (INVALID) instead of failing in
// PostgreSQL.
import { many, maybeOne, one, type Queryable, type SQLQuery, sql } from '../db/pool.js';
import { change } from '../entities/change.js';
import { invalid } from '../errors.js';
import { changeKeys } from '../events/keys.js';
import { codePoints } from '../identifiers.js';
import { CHANGE_COLUMN_SIZES, CHANGE_FILE_SIZE, PROPERTY_NAME_SIZE } from './column-sizes.js';
import { entity } from './entities.js';
import { hashColumns } from './names.js';
import { findOrCreateSourceStamp } from './sourcestamps.js';
import { now, type Tx } from './transaction.js';
import { createUserObject } from './users.js';

export interface NewChange {
  author: string;
  committer?: string | null;
  files?: readonly string[];
  comments?: string;
  revision?: string | null;
  /** Seconds since the epoch; default now. */
  when_timestamp?: number | null;
  branch?: string | null;
  category?: string | null;
  revlink?: string | null;
  /** name -> value (JSON-able); stored with the source "Change". */
  properties?: Record<string, unknown>;
  repository?: string;
  codebase?: string;
  project?: string;
  /** The version-control system (git, svn, hg...), to link the author as a user. */
  src?: string | null;
}

function checkLengths(c: NewChange): void {
  for (const [field, max] of Object.entries(CHANGE_COLUMN_SIZES)) {
    const v = c[field as keyof typeof CHANGE_COLUMN_SIZES];
    if (typeof v === 'string' && codePoints(v) > max)
      throw invalid(`change ${field} is longer than ${max} characters`);
  }
  for (const f of c.files ?? [])
    if (codePoints(f) > CHANGE_FILE_SIZE)
      throw invalid(`a change file name is longer than ${CHANGE_FILE_SIZE} characters`);
  for (const name of Object.keys(c.properties ?? {}))
    if (codePoints(name) > PROPERTY_NAME_SIZE)
      throw invalid(`a change property name is longer than ${PROPERTY_NAME_SIZE} characters`);
}

export async function addChange(tx: Tx, c: NewChange): Promise<number> {
  checkLengths(c);
  const branch = c.branch ?? null;
  const repository = c.repository ?? '';
  const project = c.project ?? '';
  const codebase = c.codebase ?? '';
  const revision = c.revision ?? null;
  const uid = await createUserObject(tx, c.author, c.src);
  const ssid = await findOrCreateSourceStamp(tx, { branch, revision, repository, project, codebase });
  const line = hashColumns([branch, repository, project, codebase]);
  await tx.q.query(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`flotilla:changes:${line}`}, 0))`);
  const parent = await maybeOne<{ changeid: number }>(
    tx.q,
    sql`SELECT changeid FROM changes
        WHERE branch IS NOT DISTINCT FROM ${branch} AND repository = ${repository} AND project = ${project}
          AND codebase = ${codebase}
        ORDER BY changeid DESC LIMIT 1`,
  );
  const { changeid } = await one<{ changeid: number }>(
    tx.q,
    sql`INSERT INTO changes (author, committer, comments, branch, revision, revlink, when_timestamp, category,
                             repository, codebase, project, sourcestampid, parent_changeids)
        VALUES (${c.author}, ${c.committer ?? null}, ${c.comments ?? ''}, ${branch}, ${revision}, ${c.revlink ?? ''},
                ${c.when_timestamp ?? now()}, ${c.category ?? null}, ${repository}, ${codebase}, ${project}, ${ssid},
                ${parent?.changeid ?? null})
        RETURNING changeid`,
  );
  const files = c.files ?? [];
  if (files.length > 0) {
    await tx.q.query(sql`INSERT INTO change_files (changeid, filename)
                         VALUES ${sql.join(
                           files.map((f) => sql`(${changeid}, ${f})`),
                           sql`, `,
                         )}`);
  }
  const props = Object.entries(c.properties ?? {});
  if (props.length > 0) {
    await tx.q.query(sql`INSERT INTO change_properties (changeid, property_name, property_value)
                         VALUES ${sql.join(
                           props.map(
                             ([n, v]) => sql`(${changeid}, ${n}, ${JSON.stringify([v ?? null, 'Change'])})`,
                           ),
                           sql`, `,
                         )}`);
  }
  if (uid !== null)
    await tx.q.query(sql`INSERT INTO change_users (changeid, uid) VALUES (${changeid}, ${uid})`);
  tx.out.addAll(changeKeys(changeid), 'new', await entity(tx.q, change, changeid));
  return changeid;
}

// What schedulers read of changes (they weigh each against their filters, then build it).

/** A change as a scheduler weighs it. */
export interface ChangeFacts {
  changeid: number;
  branch: string | null;
  category: string | null;
  repository: string;
  project: string;
  codebase: string;
  files: string[];
}

const changeFactColumns = sql`
  c.changeid, c.branch, c.category, c.repository, c.project, c.codebase,
  coalesce((SELECT array_agg(f.filename) FROM change_files f WHERE f.changeid = c.changeid), '{}') AS files`;

export function getChangeFacts(q: Queryable, changeid: number): Promise<ChangeFacts | undefined> {
  return maybeOne<ChangeFacts>(
    q,
    sql`SELECT ${changeFactColumns} FROM changes c WHERE c.changeid = ${changeid}`,
  );
}

/** The changes after `changeid`, oldest first, at most `limit`. */
export function changeFactsAfter(q: Queryable, changeid: number, limit: number): Promise<ChangeFacts[]> {
  return many<ChangeFacts>(
    q,
    sql`
    SELECT ${changeFactColumns} FROM changes c WHERE c.changeid > ${changeid} ORDER BY c.changeid LIMIT ${limit}`,
  );
}

/** The newest change id, 0 when there is none. */
export async function lastChangeId(q: Queryable): Promise<number> {
  return (await one<{ id: number }>(q, sql`SELECT coalesce(max(changeid), 0) AS id FROM changes`)).id;
}

/** Each change's codebase and source stamp, in change id order. */
export function changeStamps(
  q: Queryable,
  changeids: readonly number[],
): Promise<{ changeid: number; codebase: string; sourcestampid: number }[]> {
  return many(
    q,
    sql`
    SELECT changeid, codebase, sourcestampid FROM changes WHERE changeid = ANY(${[...changeids]}::int[])
    ORDER BY changeid`,
  );
}

/**
 * The properties of the changes carried by these source stamps, oldest change first (so a
 * newer change's value wins), each as stored: [value, source]. A value that is not JSON is
 * left out (Buildbot could not read it either).
 */
export async function stampChangeProperties(
  q: Queryable,
  sourcestampids: readonly number[],
): Promise<[string, unknown][]> {
  if (sourcestampids.length === 0) return [];
  const rows = await many<{ property_name: string; property_value: string }>(
    q,
    sql`
    SELECT p.property_name, p.property_value FROM changes c JOIN change_properties p ON p.changeid = c.changeid
    WHERE c.sourcestampid = ANY(${[...sourcestampids]}::int[]) ORDER BY c.changeid, p.property_name`,
  );
  const out: [string, unknown][] = [];
  for (const r of rows) {
    try {
      out.push([r.property_name, JSON.parse(r.property_value)]);
    } catch {
      // left out
    }
  }
  return out;
}

/** The authors of the changes a build set builds, in name order (a build's `owners`). */
export async function buildsetChangeAuthors(q: Queryable, bsid: number): Promise<string[]> {
  const rows = await many<{ author: string }>(q, buildsetChangeAuthorsQuery(bsid));
  return rows.map((r) => r.author);
}

/** buildsetChangeAuthors' statement, for a build's start to read with its other facts (build-start.ts). */
export const buildsetChangeAuthorsQuery = (bsid: number): SQLQuery => sql`
    SELECT DISTINCT c.author FROM buildset_sourcestamps bss JOIN changes c ON c.sourcestampid = bss.sourcestampid
    WHERE bss.buildsetid = ${bsid} ORDER BY c.author`;

/**
 * The builds each change caused, one row per change and build (a build of a build set with
 * several changed stamps is under each of them): the build's columns and `changeid`, as a
 * FROM item aliased `a`, for the read API's `/change_builds` (Flotilla's: the grid, the
 * console and the changes page read the builds of a page of changes at once instead of one
 * `/changes/{id}/builds` per change). The same join as that path's. A filter on `changeid`
 * reaches the changes' primary key, as the planner pulls the subquery up into the page's
 * statement, so the database filters and pages it.
 */
export function changeBuildsFrom(): SQLQuery {
  return sql`(SELECT b.*, c.changeid FROM changes c
    JOIN buildset_sourcestamps bss ON bss.sourcestampid = c.sourcestampid
    JOIN buildrequests br ON br.buildsetid = bss.buildsetid
    JOIN builds b ON b.buildrequestid = br.id) a`;
}
