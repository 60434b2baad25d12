// Build requests: claims are all or nothing (a claim is a row in buildrequest_claims, whose
// unique brid makes two masters' claims exclude each other), completion likewise; completing
// the last request of a build set completes the build set.
//
// Buildbot facts (buildbot/db/buildrequests.py, buildbot/data/buildrequests.py): claim,
// complete and reclaim answer a boolean (AlreadyClaimedError / NotClaimedError become False);
// a request never completes with RETRY; events carry the request entity under three keys,
// e = claimed, unclaimed, complete (plus `cancel`). Buildbot's completeBuildRequests does
// not check the claim; we complete a request only for the master that holds its claim (cancel
// has its own path): a master that was expired while it was away (a long pause, a network
// cut) and comes back must not write its outcome over the rerun's that the cluster decided
// on meanwhile. Buildbot's housekeeping unclaims a dead master's
// requests by the *caller's* master id (unclaimBuildRequests filters on self.masterid), so
// they stay claimed; unclaimMasterRequests releases them by the dead master's id.
import { many, maybeOne, one, type Queryable, sql } from '../db/pool.js';
import { buildrequest } from '../entities/buildrequest.js';
import { ConflictError, invalid, noSuch } from '../errors.js';
import { buildrequestKeys } from '../events/keys.js';
import { Results } from '../results.js';
import { maybeBuildsetComplete } from './buildsets.js';
import { entities, entity } from './entities.js';
import { now, type Tx } from './transaction.js';

async function emit(tx: Tx, brids: readonly number[], event: string): Promise<void> {
  for (const e of await entities<{ buildrequestid: number; buildsetid: number; builderid: number }>(
    tx.q,
    buildrequest,
    brids,
  )) {
    tx.out.addAll(buildrequestKeys(e.buildsetid, e.builderid, e.buildrequestid), event, e);
  }
}

/**
 * Claim every request for `masterid`, or none: false (and nothing claimed) if any is missing,
 * complete or claimed already. Concurrent claims of overlapping sets cannot both succeed.
 * With `onlyIfActive`, also false while the master's row says it is not active: a master the
 * cluster expired while it was away claims nothing until it has noticed and registered again
 * (otherwise it starts a build it must hand back RETRY at its next heartbeat).
 */
export async function claimBuildRequests(
  tx: Tx,
  brids: readonly number[],
  masterid: number,
  claimedAt = now(),
  opts: { onlyIfActive?: boolean } = {},
): Promise<boolean> {
  if (brids.length === 0) return true;
  const ids = [...new Set(brids)];
  if (opts.onlyIfActive) {
    // FOR SHARE: an expiry (which updates the row) waits for this claim and then releases it
    // with the master's others, rather than missing it.
    const active = await maybeOne<{ id: number }>(
      tx.q,
      sql`SELECT id FROM masters WHERE id = ${masterid} AND active = 1 FOR SHARE`,
    );
    if (!active) return false;
  }
  // Row locks on the requests, taken in id order, serialize our claims with each other and
  // with completion and cancellation; the unique brid of the claims table decides against a
  // claimer that takes no lock (a Buildbot master on the same database).
  const open = await many<{ id: number }>(
    tx.q,
    sql`SELECT id FROM buildrequests WHERE id = ANY(${ids}::int[]) AND complete = 0 ORDER BY id FOR NO KEY UPDATE`,
  );
  if (open.length !== ids.length) return false;
  const held = await maybeOne<{ brid: number }>(
    tx.q,
    sql`SELECT brid FROM buildrequest_claims WHERE brid = ANY(${ids}::int[]) LIMIT 1`,
  );
  if (held) return false;
  const inserted = await many<{ brid: number }>(
    tx.q,
    sql`INSERT INTO buildrequest_claims (brid, masterid, claimed_at)
        SELECT id, ${masterid}, ${claimedAt} FROM unnest(${ids}::int[]) AS x(id)
        ON CONFLICT (brid) DO NOTHING RETURNING brid`,
  );
  if (inserted.length !== ids.length) {
    // Lost to an unlocked claimer: take back the rows this transaction inserted.
    await tx.q.query(sql`DELETE FROM buildrequest_claims
                         WHERE brid = ANY(${inserted.map((r) => r.brid)}::int[]) AND masterid = ${masterid}`);
    return false;
  }
  await emit(tx, ids, 'claimed');
  return true;
}

/**
 * Claim each request that is still free, in one transaction of two statements: the ids won
 * (ascending), the others left to whoever holds them. A request another transaction has
 * locked (a claim, a completion or a cancel under way) is skipped, not waited for; the unique
 * brid of the claims table still decides against a claimer that takes no lock. Nothing
 * while the master's row says it is not active (claimBuildRequests' onlyIfActive).
 *
 * What a master's claim pass uses for builders that do not collapse requests: measured with
 * load/fleet/run.sh, one transaction per claim (four statements) made a master's claims as
 * slow as its round trips, one after another (3.6 builds/s for three masters at 0.14 of a
 * core in all); a pass's claims now cost two round trips whatever their number.
 */
export async function claimEachBuildRequest(
  tx: Tx,
  brids: readonly number[],
  masterid: number,
  claimedAt = now(),
): Promise<number[]> {
  if (brids.length === 0) return [];
  const active = await maybeOne<{ id: number }>(
    tx.q,
    sql`SELECT id FROM masters WHERE id = ${masterid} AND active = 1 FOR SHARE`,
  );
  if (!active) return [];
  const won = await many<{ brid: number }>(
    tx.q,
    sql`
    WITH open AS (
      SELECT id FROM buildrequests WHERE id = ANY(${[...new Set(brids)]}::int[]) AND complete = 0
      ORDER BY id FOR NO KEY UPDATE SKIP LOCKED)
    INSERT INTO buildrequest_claims (brid, masterid, claimed_at)
    SELECT id, ${masterid}, ${claimedAt} FROM open ORDER BY id
    ON CONFLICT (brid) DO NOTHING RETURNING brid`,
  );
  const ids = won.map((r) => r.brid).sort((a, b) => a - b);
  if (ids.length > 0) await emit(tx, ids, 'claimed');
  return ids;
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
  const held = await many<{ brid: number }>(
    tx.q,
    sql`SELECT c.brid FROM buildrequest_claims c JOIN buildrequests br ON br.id = c.brid
        WHERE c.brid = ANY(${ids}::int[]) AND c.masterid = ${masterid} AND br.complete = 0
        ORDER BY c.brid FOR NO KEY UPDATE OF c`,
  );
  if (held.length !== ids.length) return false;
  await tx.q.query(
    sql`UPDATE buildrequest_claims SET claimed_at = ${at} WHERE brid = ANY(${ids}::int[]) AND masterid = ${masterid}`,
  );
  return true;
}

/** Give back the claims `masterid` holds on these requests (others' claims are left alone). */
export async function unclaimBuildRequests(
  tx: Tx,
  brids: readonly number[],
  masterid: number,
): Promise<number[]> {
  if (brids.length === 0) return [];
  const rows = await many<{ brid: number }>(
    tx.q,
    sql`DELETE FROM buildrequest_claims WHERE brid = ANY(${[...new Set(brids)]}::int[]) AND masterid = ${masterid}
        RETURNING brid`,
  );
  const released = rows.map((r) => r.brid);
  await emit(tx, released, 'unclaimed');
  return released;
}

/**
 * Release every claim on an incomplete request taken more than `old` seconds ago (its master
 * stopped renewing it). Returns the released request ids.
 */
export async function unclaimExpiredRequests(tx: Tx, old: number): Promise<number[]> {
  const rows = await many<{ brid: number }>(
    tx.q,
    sql`DELETE FROM buildrequest_claims c USING buildrequests br
        WHERE br.id = c.brid AND br.complete = 0 AND c.claimed_at < ${now() - old}
        RETURNING c.brid`,
  );
  const released = rows.map((r) => r.brid).sort((a, b) => a - b);
  await emit(tx, released, 'unclaimed');
  return released;
}

/** Release the claims of a master that is gone, on its requests that are not complete. */
export async function unclaimMasterRequests(tx: Tx, masterid: number): Promise<number[]> {
  const rows = await many<{ brid: number }>(
    tx.q,
    sql`DELETE FROM buildrequest_claims c USING buildrequests br
        WHERE br.id = c.brid AND br.complete = 0 AND c.masterid = ${masterid}
        RETURNING c.brid`,
  );
  const released = rows.map((r) => r.brid).sort((a, b) => a - b);
  await emit(tx, released, 'unclaimed');
  return released;
}

/**
 * Complete every request, or none: false (and nothing changed) if any is missing, complete
 * already or not claimed by `claimedBy`. Then complete each build set whose last request
 * this was.
 */
export async function completeBuildRequests(
  tx: Tx,
  brids: readonly number[],
  results: number,
  claimedBy: number,
  completeAt = now(),
): Promise<boolean> {
  if (results === Results.RETRY) throw invalid('a build request cannot complete with RETRY');
  if (brids.length === 0) return true;
  const ids = [...new Set(brids)];
  const open = await many<{ id: number }>(
    tx.q,
    sql`SELECT id FROM buildrequests br WHERE id = ANY(${ids}::int[]) AND complete = 0
          AND EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = br.id AND c.masterid = ${claimedBy})
        ORDER BY id FOR NO KEY UPDATE`,
  );
  if (open.length !== ids.length) return false;
  const rows = await many<{ id: number; buildsetid: number }>(
    tx.q,
    sql`UPDATE buildrequests SET complete = 1, results = ${results}, complete_at = ${completeAt}
        WHERE id = ANY(${ids}::int[]) AND complete = 0
        RETURNING id, buildsetid`,
  );
  if (rows.length !== ids.length)
    throw new ConflictError('NOT_CLAIMED', 'a build request changed under its lock');
  await emit(tx, ids, 'complete');
  const bsids = [...new Set(rows.map((r) => r.buildsetid))].sort((a, b) => a - b);
  for (const bsid of bsids) await maybeBuildsetComplete(tx, bsid);
  return true;
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
  const br = await maybeOne<{ id: number; complete: number | null; buildsetid: number }>(
    tx.q,
    sql`SELECT id, complete, buildsetid FROM buildrequests WHERE id = ${brid} FOR UPDATE`,
  );
  if (!br) throw noSuch(`build request ${brid}`);
  const claim = await maybeOne<{ brid: number }>(
    tx.q,
    sql`SELECT brid FROM buildrequest_claims WHERE brid = ${brid}`,
  );
  if (!br.complete && !claim) {
    const at = now();
    await tx.q.query(sql`UPDATE buildrequests SET complete = 1, results = ${Results.CANCELLED}, complete_at = ${at}
                         WHERE id = ${brid}`);
    await emit(tx, [brid], 'complete');
    tx.out.add(['buildrequests', brid, 'cancel'], await entity(tx.q, buildrequest, brid));
    await maybeBuildsetComplete(tx, br.buildsetid);
    return { cancelled: true, buildsToStop: [] };
  }
  // Its builds, and (transitively) the builds of build sets they triggered.
  const builds = await many<{ id: number }>(
    tx.q,
    sql`
    WITH RECURSIVE tree(id) AS (
      SELECT b.id FROM builds b WHERE b.buildrequestid = ${brid}
      UNION
      SELECT child.id FROM tree
      JOIN buildsets cbs ON cbs.parent_buildid = tree.id
      JOIN buildrequests cbr ON cbr.buildsetid = cbs.id
      JOIN builds child ON child.buildrequestid = cbr.id)
    SELECT tree.id FROM tree JOIN builds b ON b.id = tree.id WHERE b.complete_at IS NULL ORDER BY tree.id`,
  );
  return { cancelled: false, buildsToStop: builds.map((b) => b.id) };
}

/**
 * The set_priority action (later Buildbot versions; 3.7 has none): a request that has not
 * completed gets a new priority, and an `update` event. False for a completed request.
 */
export async function setBuildRequestPriority(tx: Tx, brid: number, priority: number): Promise<boolean> {
  const changed = await maybeOne<{ id: number }>(
    tx.q,
    sql`UPDATE buildrequests SET priority = ${priority}
        WHERE id = ${brid} AND coalesce(complete, 0) = 0 RETURNING id`,
  );
  if (!changed) return false;
  await emit(tx, [brid], 'update');
  return true;
}

// What a master's distributor reads to choose its next claims. The unclaimed set holds only
// pending requests (migration 0008); a cancelled request is kept elsewhere. The `complete`
// tests stay for a database that 0008 has not reached yet.

/**
 * Pending requests of many builders in one statement, each builder's in the order they are
 * claimed (highest priority, then oldest) and at most its limit: builderid -> requests.
 *
 * One statement per claim pass, not one per builder. Measured with load/fleet/run.sh (1,000
 * builders, 25,000 pending, 3 masters, load average about 20 from other work): one query per
 * builder read the whole unclaimed set each time (the ANY(ARRAY(...)) form, chosen for the
 * API's claimed=false, commit 5080ae3) and fetched each of its requests by id to keep that
 * builder's, so a pass cost the queue times the builders, and the masters started 5.7
 * builds a second while using 0.17 of a core.
 *
 * Each builder's first candidates from migration 0042's index (its pending requests in claim
 * order), not the whole queue ranked: ranked, every pass read and sorted all 25,000 pending
 * requests however few workers were idle, and the planner, which cannot see how many ids the
 * unclaimed set holds, joined them to the builders in a nested loop. On 25,000 pending over
 * 1,000 builders (load 34-40, pgbench -T 8 -c 1 on the statement, load/results/fleet.md
 * 2026-11-28 22:30): 20 builders 268 -> 3 ms, 1,000 builders 204 -> 53 ms. A claimed request
 * still in the index is skipped by the look into the unclaimed set (a handful per builder:
 * its running builds).
 */
export async function pendingBuildRequests(
  q: Queryable,
  limits: ReadonlyMap<number, number>,
): Promise<Map<number, { id: number; buildsetid: number }[]>> {
  const out = new Map<number, { id: number; buildsetid: number }[]>();
  if (limits.size === 0) return out;
  const rows = await many<{ id: number; buildsetid: number; builderid: number }>(
    q,
    sql`
    SELECT r.id, r.buildsetid, x.builderid
    FROM unnest(${[...limits.keys()]}::int[], ${[...limits.values()]}::int[]) WITH ORDINALITY AS x(builderid, lim, o)
    CROSS JOIN LATERAL (
      SELECT br.id, br.buildsetid, br.priority, br.submitted_at FROM buildrequests br
      WHERE br.builderid = x.builderid AND coalesce(br.complete, 0) = 0
        AND EXISTS (SELECT 1 FROM flotilla.unclaimed_buildrequests u WHERE u.brid = br.id)
      ORDER BY br.priority DESC, br.submitted_at ASC, br.id ASC
      LIMIT x.lim) r
    ORDER BY x.o, r.priority DESC, r.submitted_at ASC, r.id ASC`,
  );
  for (const r of rows) {
    const list = out.get(r.builderid) ?? [];
    list.push({ id: r.id, buildsetid: r.buildsetid });
    out.set(r.builderid, list);
  }
  return out;
}

/**
 * The builder's other pending requests whose source stamps are compatible with `brid`'s, by
 * Buildbot's default collapse rule (BuildRequest.canBeCollapsed): the same codebases, and for
 * each the same repository, branch and project, neither with a patch, and both with changes
 * or neither and the same revision. What collapse_requests folds into one build; with their
 * build set ids, oldest first.
 */
export async function collapsibleBuildRequests(
  q: Queryable,
  builderid: number,
  brid: number,
): Promise<{ id: number; buildsetid: number }[]> {
  // A stamp with a patch gets a key of its own request, so it is compatible with nothing; one
  // with changes matches any other with changes, one without only the same revision.
  const key = (req: ReturnType<typeof sql>) => sql`array_agg(ss.codebase || chr(1) || ss.repository || chr(1)
      || coalesce(ss.branch, chr(2)) || chr(1) || ss.project || chr(1)
      || CASE WHEN ss.patchid IS NOT NULL THEN 'patch ' || ${req}
              WHEN EXISTS (SELECT 1 FROM changes ch WHERE ch.sourcestampid = ss.id) THEN 'changes'
              ELSE 'revision ' || coalesce(ss.revision, chr(2)) END ORDER BY ss.codebase)`;
  return many<{ id: number; buildsetid: number }>(
    q,
    sql`
    SELECT br.id, br.buildsetid FROM buildrequests br
    WHERE br.builderid = ${builderid} AND br.complete = 0 AND br.id <> ${brid}
      AND br.id = ANY (ARRAY(SELECT u.brid FROM flotilla.unclaimed_buildrequests u))
      AND (SELECT ${key(sql`br.id`)}
           FROM buildset_sourcestamps bss JOIN sourcestamps ss ON ss.id = bss.sourcestampid
           WHERE bss.buildsetid = br.buildsetid)
        = (SELECT ${key(sql`me.id`)}
           FROM buildrequests me JOIN buildset_sourcestamps bss ON bss.buildsetid = me.buildsetid
           JOIN sourcestamps ss ON ss.id = bss.sourcestampid WHERE me.id = ${brid})
    ORDER BY br.id`,
  );
}

/** How many requests wait for a claim on these builders. */
export async function queuedBuildRequestCount(q: Queryable, builderids: readonly number[]): Promise<number> {
  const row = await one<{ n: number }>(
    q,
    sql`
    SELECT count(*)::int AS n FROM flotilla.unclaimed_buildrequests u JOIN buildrequests br ON br.id = u.brid
    WHERE br.builderid = ANY(${[...builderids]}::int[]) AND coalesce(br.complete, 0) = 0`,
  );
  return row.n;
}
