// What the old build canceller reads and how one master alone acts on a change
// (services/master/old-build-canceller.ts).
import { many, maybeOne, sql } from '../db/pool.js';
import { getState, setState } from './object-state.js';
import type { Tx } from './transaction.js';

/** The branch line a change is on: Buildbot keys it by (project, codebase, repository, branch). */
export interface ChangeLine {
  changeid: number;
  project: string;
  codebase: string;
  repository: string;
  branch: string | null;
}

export async function changeLine(tx: Tx, changeid: number): Promise<ChangeLine | undefined> {
  return maybeOne<ChangeLine>(
    tx.q,
    sql`SELECT changeid, project, codebase, repository, branch FROM changes WHERE changeid = ${changeid}`,
  );
}

/** One source stamp of an unfinished request, with its builder's name. */
export interface UnfinishedStamp {
  brid: number;
  builder: string;
  project: string;
  codebase: string;
  repository: string;
  branch: string | null;
}

/**
 * The source stamps of the unfinished requests whose build set has a stamp of the change's
 * project, codebase and repository, and none of this change or a later one (work made for
 * the change itself, even before its event is heard, is not superseded by it). Written to
 * start from the unfinished requests (buildrequests_complete) rather than from every stamp
 * of the repository; its plan on a large database is not measured. Each request is then
 * locked by its cancel (cancelBuildRequest).
 */
export async function unfinishedStampsBefore(tx: Tx, c: ChangeLine): Promise<UnfinishedStamp[]> {
  return many<UnfinishedStamp>(
    tx.q,
    sql`
    SELECT br.id AS brid, b.name AS builder, ss.project, ss.codebase, ss.repository, ss.branch
    FROM buildrequests br
    JOIN builders b ON b.id = br.builderid
    JOIN buildset_sourcestamps bss ON bss.buildsetid = br.buildsetid
    JOIN sourcestamps ss ON ss.id = bss.sourcestampid
    WHERE br.complete = 0
      AND EXISTS (
        SELECT 1 FROM buildset_sourcestamps bss2
        JOIN sourcestamps s2 ON s2.id = bss2.sourcestampid
        WHERE bss2.buildsetid = br.buildsetid
          AND s2.project = ${c.project} AND s2.codebase = ${c.codebase} AND s2.repository = ${c.repository})
      AND NOT EXISTS (
        SELECT 1 FROM buildset_sourcestamps bss3
        JOIN changes ch ON ch.sourcestampid = bss3.sourcestampid
        WHERE bss3.buildsetid = br.buildsetid AND ch.changeid >= ${c.changeid})
    ORDER BY br.id, bss.id`,
  );
}

const LAST_CHANGE_KEY = 'last_changeid';

/**
 * Whether this caller is the one that acts on the change for the state object: every master
 * hears every change, and the first to lock the object and move its mark past the change acts;
 * the others (and a replay of the same event) find the mark there and do nothing.
 */
export async function takeChange(tx: Tx, objectid: number, changeid: number): Promise<boolean> {
  await tx.q.query(sql`SELECT id FROM objects WHERE id = ${objectid} FOR UPDATE`);
  const last = await getState(tx.q, objectid, LAST_CHANGE_KEY);
  if (typeof last === 'number' && last >= changeid) return false;
  await setState(tx.q, objectid, LAST_CHANGE_KEY, changeid);
  return true;
}
