// Builds: newBuild, setBuildStateString, finishBuild.
//
// Buildbot facts (buildbot/db/builds.py addBuild, buildbot/data/builds.py):
// - a builder's build numbers start at 1 and are max(number) + 1; the unique index
//   builds_number (builderid, number) is what makes a number taken. Buildbot retries the
//   insert on a clash; we first lock the builder's row, so our own masters number one after
//   another without clashing, and still retry (ON CONFLICT) in case a Buildbot master that
//   takes no lock shares the database;
// - started_at and complete_at are whole seconds; `complete` is complete_at IS NOT NULL;
// - events carry the build entity (with `properties: {}`) under builders/<id>/builds/<n>,
//   builds/<id> and workers/<id>/builds/<id>: `new`, `update` (state string), `finished`.
// The contract's initial state string is `starting` (Buildbot's addBuild writes `created`).
// finishBuild finishes a build once: a finished build keeps its results (a master that was
// expired and finished with RETRY cannot turn that into SUCCESS later); an upload the build
// left unfinished is dropped then (artifacts.ts).
import { many, maybeOne, type Queryable, type SQLQuery, sql } from '../db/pool.js';
import { build } from '../entities/build.js';
import { noSuch } from '../errors.js';
import { buildKeys } from '../events/keys.js';
import { dropIncompleteArtifacts } from './artifacts.js';
import { completeBuildRequests } from './buildrequests.js';
import { writtenEntity } from './entities.js';
import { now, type Tx } from './transaction.js';

export interface NewBuild {
  builderid: number;
  buildrequestid: number;
  workerid: number | null;
  /** The master that runs the build. */
  masterid: number;
  state_string?: string;
  /**
   * Write the row only while this master holds the request's claim (a build's start): the
   * claim is the INSERT's own condition, where it was a read of the fence after it, a
   * statement a start (load/results/fleet.md, 2026-11-29, phase S). Nothing is written, and
   * newBuild answers null, when it does not.
   */
  claimedBy?: number;
}

type BuildEntity = { buildid: number; builderid: number; number: number; workerid: number | null };

/** A write of one build (RETURNING *) and its event: the build as written; undefined when no row was written. */
async function written(tx: Tx, write: SQLQuery, event: string): Promise<BuildEntity | undefined> {
  const b = await writtenEntity<BuildEntity>(tx.q, build, write);
  if (b) tx.out.addAll(buildKeys(b), event, b);
  return b;
}

export function newBuild(
  tx: Tx,
  b: NewBuild & { claimedBy: number },
): Promise<{ buildid: number; number: number } | null>;
export function newBuild(tx: Tx, b: NewBuild): Promise<{ buildid: number; number: number }>;
export async function newBuild(tx: Tx, b: NewBuild): Promise<{ buildid: number; number: number } | null> {
  const locked = await maybeOne<{ id: number }>(
    tx.q,
    sql`SELECT id FROM builders WHERE id = ${b.builderid} FOR NO KEY UPDATE`,
  );
  if (!locked) throw noSuch(`builder ${b.builderid}`);
  const startedAt = now();
  for (;;) {
    const row = await written(
      tx,
      sql`
      INSERT INTO builds (number, builderid, buildrequestid, workerid, masterid, started_at, complete_at,
                          state_string, results)
      SELECT coalesce(max(number), 0) + 1, ${b.builderid}, ${b.buildrequestid}, ${b.workerid}, ${b.masterid},
             ${startedAt}, NULL, ${b.state_string ?? 'starting'}, NULL
      FROM builds WHERE builderid = ${b.builderid}
      ${b.claimedBy === undefined ? sql`` : claimHeld(b.buildrequestid, b.claimedBy, sql`HAVING`)}
      ON CONFLICT (builderid, number) DO NOTHING
      RETURNING *`,
      'new',
    );
    if (row) return { buildid: row.buildid, number: row.number };
    // No row: a number taken by a master that takes no lock (try again), or the claim gone.
    if (b.claimedBy !== undefined) {
      const [row] = await many<{ held: boolean }>(
        tx.q,
        sql`SELECT ${claimHeld(b.buildrequestid, b.claimedBy, sql``)} AS held`,
      );
      if (!row?.held) return null;
    }
  }
}

/** Whether `masterid` holds the claim on request `brid`, as a condition after `keyword`. */
const claimHeld = (brid: number, masterid: number, keyword: SQLQuery): SQLQuery =>
  sql`${keyword} EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = ${brid} AND c.masterid = ${masterid})`;

/**
 * The newest build of a request (0 when none): what a build's start reads first, so that a
 * retry of its first transaction knows which open builds were there before it began.
 */
export async function lastBuildOfRequest(q: Queryable, buildrequestid: number): Promise<number> {
  const row = await maybeOne<{ id: number | null }>(
    q,
    sql`SELECT max(id) AS id FROM builds WHERE buildrequestid = ${buildrequestid}`,
  );
  return row?.id ?? 0;
}

/**
 * The open build this master began for this request after build `after`, if there is one:
 * how a master that asked for a new build while the database went away learns that the row
 * was committed after all. Only rows newer than the start's first look: the same master may
 * run the request again (a RETRY) while its earlier build is still open, its end not yet
 * written, and that build is not this start's (a CI run adopted it, and one build of the two
 * went missing: test/master/faults.test.ts, "past the limit").
 */
export function openBuildOfRequest(
  q: Queryable,
  buildrequestid: number,
  masterid: number,
  after: number,
): Promise<{ buildid: number; number: number } | undefined> {
  return maybeOne(
    q,
    sql`SELECT id AS buildid, number FROM builds
        WHERE buildrequestid = ${buildrequestid} AND masterid = ${masterid} AND complete_at IS NULL
          AND id > ${after}`,
  );
}

export async function setBuildStateString(tx: Tx, buildid: number, stateString: string): Promise<void> {
  const updated = await written(
    tx,
    sql`UPDATE builds SET state_string = ${stateString} WHERE id = ${buildid} RETURNING *`,
    'update',
  );
  if (!updated) throw noSuch(`build ${buildid}`);
}

/** Finish a running build now with `results`; false (and no event) if it was finished already. */
export async function finishBuild(tx: Tx, buildid: number, results: number): Promise<boolean> {
  const finished = await writtenEntity<BuildEntity>(
    tx.q,
    build,
    sql`UPDATE builds SET complete_at = ${now()}, results = ${results}
        WHERE id = ${buildid} AND complete_at IS NULL RETURNING *`,
  );
  if (!finished) {
    const exists = await maybeOne<{ id: number }>(tx.q, sql`SELECT id FROM builds WHERE id = ${buildid}`);
    if (!exists) throw noSuch(`build ${buildid}`);
    return false;
  }
  await dropIncompleteArtifacts(tx, buildid);
  tx.out.addAll(buildKeys(finished), 'finished', finished);
  return true;
}

/**
 * setBuildStateString and finishBuild in one UPDATE, a build's end (services/master/builds/
 * run-build.ts): its `update` event carries the build with its state string and not yet
 * finished, then `finished` as written; a statement and its triggers fewer a build
 * (load/results/fleet.md, 2026-11-29 00:40). A build finished already gets its state string
 * alone, as the two calls would have left it; false then.
 */
export async function endBuild(
  tx: Tx,
  buildid: number,
  stateString: string,
  results: number,
): Promise<boolean> {
  const b = await writtenEntity<BuildEntity>(
    tx.q,
    build,
    sql`UPDATE builds SET state_string = ${stateString}, complete_at = ${now()}, results = ${results}
        WHERE id = ${buildid} AND complete_at IS NULL RETURNING *`,
  );
  if (!b) {
    await setBuildStateString(tx, buildid, stateString);
    return false;
  }
  await dropIncompleteArtifacts(tx, buildid);
  const keys = buildKeys(b);
  tx.out.addAll(keys, 'update', { ...b, complete: false, complete_at: null, results: null });
  tx.out.addAll(keys, 'finished', b);
  return true;
}

/** Whether a build has finished, and whether the master that runs it is active; undefined: no such build. */
export async function buildRunState(
  q: Queryable,
  buildid: number,
): Promise<{ complete: boolean; masterActive: boolean } | undefined> {
  return maybeOne(
    q,
    sql`SELECT b.complete_at IS NOT NULL AS complete, m.active <> 0 AS "masterActive"
        FROM builds b JOIN masters m ON m.id = b.masterid WHERE b.id = ${buildid}`,
  );
}

/**
 * End a build whose master is gone, as the master would have ended it when stopped: its
 * running steps and open logs finished, the build with `results`, its request completed.
 * False if the build had already finished.
 */
export async function finishOrphanedBuild(
  tx: Tx,
  buildid: number,
  results: number,
  stateString: string,
): Promise<boolean> {
  const b = await maybeOne<{ complete_at: number | null; buildrequestid: number; masterid: number }>(
    tx.q,
    sql`SELECT complete_at, buildrequestid, masterid FROM builds WHERE id = ${buildid} FOR UPDATE`,
  );
  if (!b || b.complete_at !== null) return false;
  const at = now();
  await tx.q.query(sql`
    UPDATE logs SET complete = 1 WHERE complete = 0 AND stepid IN (SELECT id FROM steps WHERE buildid = ${buildid})`);
  await tx.q.query(sql`
    UPDATE steps SET complete_at = ${at}, results = ${results} WHERE buildid = ${buildid} AND complete_at IS NULL`);
  await setBuildStateString(tx, buildid, stateString);
  await finishBuild(tx, buildid, results);
  // Its request completes as the build did (the dead master's claim is still on it).
  await completeBuildRequests(tx, [b.buildrequestid], results, b.masterid);
  return true;
}

/**
 * Forget the write records (flotilla.build_writes, migration 0012) of builds that finished
 * more than `olderThanSeconds` ago: nothing retries their writes any more. Returns how many.
 */
export async function forgetBuildWrites(tx: Tx, olderThanSeconds = 300): Promise<number> {
  const rows = await many<{ buildid: number }>(
    tx.q,
    sql`DELETE FROM flotilla.build_writes w USING builds b
        WHERE b.id = w.buildid AND b.complete_at < ${now() - olderThanSeconds} RETURNING w.buildid`,
  );
  return rows.length;
}

/**
 * The fence of a build's writes, in one statement: the last of its writes that committed
 * (flotilla.build_writes, migration 0012: its number and answer), and whether `masterid` may
 * write more (the build is open and this master holds the claim on its request). The build's
 * row is locked, so that the writes of one build, a retry of one among them, and the expiry
 * housekeeping that ends the build (it locks the builds of a master first) take turns: either
 * a write commits before the claim is released, or it sees the claim gone and writes nothing.
 * A stale claim released without its build (unclaimExpiredRequests) may go just after a write
 * that saw it, which is the same as going just after that write committed.
 *
 * `seq`: the number of the write about to run, recorded by the same statement when the fence
 * lets it run (held, and no attempt of it committed), with no answer yet: a write that answers
 * nothing (undefined or null) needs no record after its body, a statement fewer each
 * (worker_preparation's transaction at a start, the build's end: `INSERT INTO
 * flotilla.build_writes` 3.0 -> 2.0 a start in the fleet's phase S, 6.2 -> 4.1 a completed
 * build in phase B; load/results/fleet.md, 2026-11-29 03:30). A
 * write that answers records its answer with recordBuildWrite in the same transaction, so a
 * retry finds both or neither.
 */
export async function buildWriteFence(
  q: Queryable,
  buildid: number,
  masterid: number,
  seq?: number,
): Promise<{ seq: number | null; result: unknown; held: boolean }> {
  const fence = sql`SELECT b.id, w.seq, w.result,
          b.complete_at IS NULL AND EXISTS (SELECT 1 FROM buildrequest_claims c
            WHERE c.brid = b.buildrequestid AND c.masterid = ${masterid}) AS held
        FROM builds b LEFT JOIN flotilla.build_writes w ON w.buildid = b.id
        WHERE b.id = ${buildid} FOR NO KEY UPDATE OF b`;
  const f = await maybeOne<{ seq: number | null; result: unknown; held: boolean }>(
    q,
    seq === undefined
      ? fence
      : sql`WITH f AS (${fence}),
          recorded AS (
            INSERT INTO flotilla.build_writes (buildid, seq, result)
            SELECT id, ${seq}, NULL FROM f WHERE held AND (seq IS NULL OR seq < ${seq})
            ON CONFLICT (buildid) DO UPDATE SET seq = EXCLUDED.seq, result = EXCLUDED.result)
        SELECT seq, result, held FROM f`,
  );
  return f ? { seq: f.seq, result: f.result, held: f.held } : { seq: null, result: null, held: false };
}

/** Record, in the transaction that applied it, that write number `seq` of a build committed, and its answer. */
export async function recordBuildWrite(
  q: Queryable,
  buildid: number,
  seq: number,
  result: unknown,
): Promise<void> {
  await q.query(sql`
    INSERT INTO flotilla.build_writes (buildid, seq, result)
    VALUES (${buildid}, ${seq}, ${JSON.stringify(result ?? null)}::jsonb)
    ON CONFLICT (buildid) DO UPDATE SET seq = EXCLUDED.seq, result = EXCLUDED.result`);
}

/** What a try client is told of a build (Buildbot's RemoteBuild): null results while it runs. */
export interface BuildOutcome {
  buildid: number;
  results: number | null;
  state_string: string;
}

/** The builds of a build request, oldest first (`buildbot try --wait` follows each). */
export function buildsOfRequest(q: Queryable, brid: number): Promise<BuildOutcome[]> {
  return many(
    q,
    sql`SELECT id AS buildid, results, state_string FROM builds
        WHERE buildrequestid = ${brid} ORDER BY id`,
  );
}

/** One build's outcome; undefined: no such build. */
export function buildOutcome(q: Queryable, buildid: number): Promise<BuildOutcome | undefined> {
  return maybeOne(q, sql`SELECT id AS buildid, results, state_string FROM builds WHERE id = ${buildid}`);
}
