// Build requests: claims are all or nothing (a claim is a row in buildrequest_claims, whose
// unique brid makes two masters' claims exclude each other), completion likewise; completing
// the last request of a build set completes the build set.
import { sql } from '../db/pool.js';
import { Results } from '../results.js';
import { buildrequestKeys, maybeBuildsetComplete } from './buildsets.js';
import { buildrequestJson } from './entities.js';
import { DataError } from './errors.js';
import { now, type Tx } from './transaction.js';

async function emit(tx: Tx, brids: readonly number[], event: string): Promise<void> {
  const rows = await tx.q.query(sql`
    SELECT br.id, br.buildsetid, br.builderid, ${buildrequestJson('br')} AS e
    FROM buildrequests br WHERE br.id = ANY(${[...brids]}::int[]) ORDER BY br.id`);
  for (const r of rows)
    for (const key of buildrequestKeys(r.buildsetid, r.builderid, r.id)) tx.out.add([...key, event], r.e);
}

/**
 * Claim every request for `masterid`, or none: throws ALREADY_CLAIMED if any is claimed or
 * complete. Concurrent claims of overlapping sets cannot both succeed.
 */
export async function claimBuildRequests(
  tx: Tx,
  brids: readonly number[],
  masterid: number,
  claimedAt = now(),
): Promise<void> {
  if (brids.length === 0) return;
  const ids = [...new Set(brids)];
  // Row locks on the requests serialize claims with completion and cancellation.
  const open = await tx.q.query(sql`
    SELECT id FROM buildrequests WHERE id = ANY(${ids}::int[]) AND complete = 0 ORDER BY id FOR UPDATE`);
  if (open.length !== ids.length)
    throw new DataError('ALREADY_CLAIMED', 'a build request is complete or missing');
  const inserted = await tx.q.query(sql`
    INSERT INTO buildrequest_claims (brid, masterid, claimed_at)
    SELECT id, ${masterid}, ${claimedAt} FROM unnest(${ids}::int[]) AS x(id)
    ON CONFLICT (brid) DO NOTHING RETURNING brid`);
  if (inserted.length !== ids.length)
    throw new DataError('ALREADY_CLAIMED', 'a build request is already claimed');
  await emit(tx, ids, 'claimed');
}

/** Renew the claims `masterid` holds; false (and nothing changed) if any is not held by it. */
export async function reclaimBuildRequests(
  tx: Tx,
  brids: readonly number[],
  masterid: number,
  at = now(),
): Promise<boolean> {
  if (brids.length === 0) return true;
  const ids = [...new Set(brids)];
  const rows = await tx.q.query(sql`
    UPDATE buildrequest_claims SET claimed_at = ${at}
    WHERE brid = ANY(${ids}::int[]) AND masterid = ${masterid}
      AND brid IN (SELECT id FROM buildrequests WHERE complete = 0) RETURNING brid`);
  if (rows.length !== ids.length)
    throw new DataError('NOT_CLAIMED', 'a build request is not claimed by this master');
  return true;
}

/** Give back the claims `masterid` holds on these requests (others' claims are left alone). */
export async function unclaimBuildRequests(
  tx: Tx,
  brids: readonly number[],
  masterid: number,
): Promise<number[]> {
  if (brids.length === 0) return [];
  const rows = await tx.q.query(sql`
    DELETE FROM buildrequest_claims WHERE brid = ANY(${[...new Set(brids)]}::int[]) AND masterid = ${masterid}
    RETURNING brid`);
  const released = rows.map((r) => r.brid as number);
  await emit(tx, released, 'unclaimed');
  return released;
}

/**
 * Complete every request, or none: NOT_CLAIMED if any is complete already or not claimed.
 * Then complete each build set whose last request this was.
 */
export async function completeBuildRequests(
  tx: Tx,
  brids: readonly number[],
  results: number,
  completeAt = now(),
): Promise<void> {
  if (results === Results.RETRY) throw new DataError('INVALID', 'a build request cannot complete with RETRY');
  if (brids.length === 0) return;
  const ids = [...new Set(brids)];
  const rows = await tx.q.query(sql`
    UPDATE buildrequests SET complete = 1, results = ${results}, complete_at = ${completeAt}
    WHERE id = ANY(${ids}::int[]) AND complete = 0
      AND EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = buildrequests.id)
    RETURNING id, buildsetid`);
  if (rows.length !== ids.length) {
    throw new DataError('NOT_CLAIMED', 'a build request is already complete or was never claimed');
  }
  await emit(tx, ids, 'complete');
  for (const bsid of new Set(rows.map((r) => r.buildsetid as number))) await maybeBuildsetComplete(tx, bsid);
}

export interface CancelOutcome {
  /** The request was pending and is now complete with CANCELLED. */
  cancelled: boolean;
  /** Builds to stop: the request was claimed already, or these are builds it triggered. */
  buildsToStop: number[];
}

/**
 * The cancel action: a pending request completes CANCELLED at once; a claimed or finished
 * one is left to its builds, which the caller stops (with the builds they triggered).
 */
export async function cancelBuildRequest(tx: Tx, brid: number): Promise<CancelOutcome> {
  const [br] = await tx.q.query(
    sql`SELECT id, complete, buildsetid FROM buildrequests WHERE id = ${brid} FOR UPDATE`,
  );
  if (!br) throw new DataError('NOT_FOUND', `no build request ${brid}`);
  const [claim] = await tx.q.query(sql`SELECT 1 AS held FROM buildrequest_claims WHERE brid = ${brid}`);
  if (!br.complete && !claim) {
    const at = now();
    await tx.q.query(sql`UPDATE buildrequests SET complete = 1, results = ${Results.CANCELLED}, complete_at = ${at}
                         WHERE id = ${brid}`);
    await emit(tx, [brid], 'complete');
    const [row] = await tx.q.query(
      sql`SELECT ${buildrequestJson('br')} AS e FROM buildrequests br WHERE br.id = ${brid}`,
    );
    tx.out.add(['buildrequests', brid, 'cancel'], row.e);
    await maybeBuildsetComplete(tx, br.buildsetid);
    return { cancelled: true, buildsToStop: [] };
  }
  // Its builds, and (transitively) the builds of build sets they triggered.
  const builds = await tx.q.query(sql`
    WITH RECURSIVE tree(id) AS (
      SELECT b.id FROM builds b WHERE b.buildrequestid = ${brid}
      UNION
      SELECT child.id FROM tree
      JOIN buildsets cbs ON cbs.parent_buildid = tree.id
      JOIN buildrequests cbr ON cbr.buildsetid = cbs.id
      JOIN builds child ON child.buildrequestid = cbr.id)
    SELECT tree.id FROM tree JOIN builds b ON b.id = tree.id WHERE b.complete_at IS NULL ORDER BY tree.id`);
  return { cancelled: false, buildsToStop: builds.map((b) => b.id as number) };
}
