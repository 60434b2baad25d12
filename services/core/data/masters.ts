// Masters: masterActive (start and heartbeat), masterStopped, expireMasters, and the
// housekeeping a master that is gone needs.
//
// Buildbot facts (buildbot/db/masters.py, buildbot/data/masters.py):
// - a master is found or created by name_hash (sha1 of its name), created inactive;
//   masterActive sets active = 1 and last_active = now, and produces masters/<id>/started
//   ({masterid, name, active: true}) only when the master was inactive;
// - marking a master inactive deletes its scheduler_masters rows at once; when the master
//   was active, housekeeping follows and then masters/<id>/stopped ({masterid, name,
//   active: false});
// - expireMasters marks inactive every master whose last_active is older than ten minutes
//   (EXPIRE_MINUTES); forceHouseKeeping also redoes the housekeeping of stale masters that
//   are inactive already;
// - housekeeping, in Buildbot's order: its workers are deconfigured, its builders removed
//   (builder_masters, with builders/<id>/stopped), its schedulers and change sources
//   released; each of its unfinished builds has the logs of its unfinished steps finished,
//   those steps finished RETRY (not hidden) and the build finished RETRY (its state string
//   saying so, where Buildbot leaves what it said before: "starting", a step's summary); its claims on
//   incomplete requests are removed so another master runs them.
// Where we go further (the section 3): the claims are looked up by the dead
// master's id (Buildbot 3.7 uses the caller's and leaves them claimed), workers connected
// to it are disconnected (workers/<id>/disconnected), and the released requests produce
// `unclaimed`, and every lock it held or waited for is let go (locks.ts). The master calling expireMasters is alive by definition and is never expired.
// Masters being expired are row-locked in id order, so two concurrent expiries do the
// housekeeping once.
import { many, maybeOne, one, sql } from '../db/pool.js';
import { noSuch } from '../errors.js';
import { masterKeys } from '../events/keys.js';
import { Results } from '../results.js';
import { updateBuilderList } from './builders.js';
import { unclaimBuildRequests, unclaimMasterRequests } from './buildrequests.js';
import { finishBuild, setBuildStateString } from './builds.js';
import { releaseMasterLocks } from './locks.js';
import { nameHash } from './names.js';
import { releaseAll } from './ownership.js';
import { endUnfinishedSteps } from './steps.js';
import { now, type Tx } from './transaction.js';
import { deconfigureAllWorkersForMaster, disconnectAllWorkersForMaster } from './workers.js';

/** Buildbot's EXPIRE_MINUTES, in seconds. */
export const EXPIRE_SECONDS = 10 * 60;

/** The master's id by name, created (inactive) if needed. */
export async function findMasterId(tx: Tx, name: string): Promise<number> {
  const hash = nameHash(name);
  const byHash = sql`SELECT id FROM masters WHERE name_hash = ${hash}`;
  const found = await maybeOne<{ id: number }>(tx.q, byHash);
  if (found) return found.id;
  const row = await maybeOne<{ id: number }>(
    tx.q,
    sql`INSERT INTO masters (name, name_hash, active, last_active) VALUES (${name}, ${hash}, 0, ${now()})
        ON CONFLICT (name_hash) DO NOTHING RETURNING id`,
  );
  // Lost the race to another creator: theirs is committed and visible to a new statement.
  return (row ?? (await one<{ id: number }>(tx.q, byHash))).id;
}

/** Start or heartbeat: the master is active as of now. Returns its id. */
export async function masterActive(tx: Tx, name: string): Promise<number> {
  const masterid = await findMasterId(tx, name);
  const m = await one<{ active: number }>(
    tx.q,
    sql`SELECT active FROM masters WHERE id = ${masterid} FOR NO KEY UPDATE`,
  );
  await tx.q.query(sql`UPDATE masters SET active = 1, last_active = ${now()} WHERE id = ${masterid}`);
  if (!m.active) tx.out.addAll(masterKeys(masterid), 'started', { masterid, name, active: true });
  return masterid;
}

/**
 * The heartbeat of a registered master: last_active = now, while it is active. False (and
 * nothing changed) when it is not: the cluster expired it while it was away.
 */
export async function masterHeartbeat(tx: Tx, masterid: number): Promise<boolean> {
  const rows = await many<{ id: number }>(
    tx.q,
    sql`UPDATE masters SET last_active = ${now()} WHERE id = ${masterid} AND active <> 0 RETURNING id`,
  );
  return rows.length > 0;
}

/** The row a master of this name left behind, if any: whether it is active, and since when silent. */
export async function previousLife(
  tx: Tx,
  name: string,
): Promise<{ masterid: number; active: boolean; lastActive: number } | null> {
  const m = await maybeOne<{ id: number; active: number; last_active: number | string }>(
    tx.q,
    sql`SELECT id, active, last_active FROM masters WHERE name_hash = ${nameHash(name)}`,
  );
  return m ? { masterid: m.id, active: Boolean(m.active), lastActive: Number(m.last_active) } : null;
}

/**
 * A clean stop: inactive at once, with the housekeeping. False if it was inactive already.
 * The logs the housekeeping finished are added to `finishedLogs` (ExpireOptions says why).
 */
export async function masterStopped(tx: Tx, masterid: number, finishedLogs?: number[]): Promise<boolean> {
  const m = await maybeOne<{ name: string; active: number }>(
    tx.q,
    sql`SELECT name, active FROM masters WHERE id = ${masterid} FOR NO KEY UPDATE`,
  );
  if (!m) throw noSuch(`master ${masterid}`);
  return deactivate(tx, masterid, m.name, Boolean(m.active), false, finishedLogs);
}

export interface ExpireOptions {
  /** Redo the housekeeping of stale masters that are inactive already (Buildbot's forceHouseKeeping). */
  forceHousekeeping?: boolean;
  /**
   * The logs the housekeeping finished are added here: their builds' master is gone and will
   * never queue their compression, so the caller does (services/master/jobs).
   */
  finishedLogs?: number[];
}

/**
 * Mark inactive every master silent for more than `olderThanSeconds` (default ten minutes),
 * with the housekeeping; `byMasterid`, the caller, is never expired. Returns the expired ids.
 */
export async function expireMasters(
  tx: Tx,
  olderThanSeconds = EXPIRE_SECONDS,
  byMasterid: number | null = null,
  options: ExpireOptions = {},
): Promise<number[]> {
  const force = options.forceHousekeeping ?? false;
  const stale = await many<{ id: number; name: string; active: number }>(
    tx.q,
    sql`SELECT id, name, active FROM masters
        WHERE last_active < ${now() - olderThanSeconds} AND (active <> 0 OR ${force}::boolean)
          AND id IS DISTINCT FROM ${byMasterid}::int
        ORDER BY id FOR NO KEY UPDATE`,
  );
  const expired: number[] = [];
  for (const m of stale) {
    if (await deactivate(tx, m.id, m.name, Boolean(m.active), force, options.finishedLogs))
      expired.push(m.id);
  }
  return expired;
}

async function deactivate(
  tx: Tx,
  masterid: number,
  name: string,
  wasActive: boolean,
  force: boolean,
  finishedLogs?: number[],
) {
  await tx.q.query(sql`UPDATE masters SET active = 0 WHERE id = ${masterid}`);
  await releaseAll(tx, 'scheduler', masterid);
  if (wasActive || force) await housekeeping(tx, masterid, name, finishedLogs);
  if (wasActive) tx.out.addAll(masterKeys(masterid), 'stopped', { masterid, name, active: false });
  return wasActive;
}

async function housekeeping(tx: Tx, masterid: number, name: string, finishedLogs?: number[]): Promise<void> {
  await deconfigureAllWorkersForMaster(tx, masterid);
  await disconnectAllWorkersForMaster(tx, masterid);
  await updateBuilderList(tx, masterid, []);
  await releaseAll(tx, 'scheduler', masterid);
  await releaseAll(tx, 'changesource', masterid);
  const builds = await many<{ id: number }>(
    tx.q,
    sql`SELECT id FROM builds WHERE masterid = ${masterid} AND complete_at IS NULL ORDER BY id FOR NO KEY UPDATE`,
  );
  // Without a state string of its own the build would list forever as what it was doing when
  // its master died ("starting", or its last step's summary), though it ended RETRY.
  for (const build of builds) await retryBuild(tx, build.id, `retry (master ${name} was lost)`, finishedLogs);
  await unclaimMasterRequests(tx, masterid);
  await releaseMasterLocks(tx, masterid);
}

/** An unfinished build ends RETRY: the logs of its unfinished steps, those steps, the build. */
async function retryBuild(
  tx: Tx,
  buildid: number,
  stateString: string,
  finishedLogs?: number[],
): Promise<void> {
  const logs = await endUnfinishedSteps(tx, buildid, Results.RETRY);
  finishedLogs?.push(...logs);
  await setBuildStateString(tx, buildid, stateString);
  await finishBuild(tx, buildid, Results.RETRY);
}

/**
 * A live master lets go of a request it may have claimed without knowing (the database went
 * away while the claim, or its build's first row, was being committed): any open build of it
 * by this master ends RETRY, as housekeeping ends a dead master's, and the claim is released.
 * Returns the builds it ended.
 */
export async function releaseUncertainRequest(tx: Tx, brid: number, masterid: number): Promise<number[]> {
  const builds = await many<{ id: number }>(
    tx.q,
    sql`SELECT id FROM builds WHERE buildrequestid = ${brid} AND masterid = ${masterid} AND complete_at IS NULL
        ORDER BY id FOR NO KEY UPDATE`,
  );
  for (const b of builds) await retryBuild(tx, b.id, 'retry (the database went away as it started)');
  await unclaimBuildRequests(tx, [brid], masterid);
  return builds.map((b) => b.id);
}
