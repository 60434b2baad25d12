// Artifacts: what transfer steps upload (migration 0014 has the table): newArtifact,
// appendArtifact, completeArtifact, dropArtifact, dropIncompleteArtifacts, artifactsOfStep,
// artifactBytesOfBuild; reads (from PostgreSQL or the object store) are artifact-objects.ts's.
//
// Why PostgreSQL large objects: an artifact must be served by every master and API pod, and
// the database is the one thing they all reach (no shared disk, no bucket to configure).
// A large object is written and read in ranges (lo_put, lo_get), so an upload is stored
// block by block as it arrives, each block committed before the worker is told to send the
// next, and a download streams in ranges without the whole file in memory.
//
// Buildbot facts (buildbot/process/remotetransfer.py FileWriter): a second upload to the
// same masterdest replaces the first; a transfer that fails leaves no file behind.
import { many, maybeOne, one, type Queryable, type RowSource, sql } from '../db/pool.js';
import { now, type Tx } from './transaction.js';

export interface NewArtifact {
  buildid: number;
  stepid: number;
  name: string;
  kind: 'file' | 'directory';
  compress?: 'gz' | 'bz2' | null;
  mode?: number | null;
}

export interface ArtifactRow {
  id: number;
  buildid: number;
  stepid: number;
  name: string;
  kind: 'file' | 'directory';
  compress: 'gz' | 'bz2' | null;
  mode: number | null;
  length: number;
  complete: boolean;
  /** Its bytes are in the object store (artifact-objects.ts), no longer in a large object. */
  moved: boolean;
}

/** A new, empty artifact (replacing one of the same name in the build): its id. */
export async function newArtifact(tx: Tx, a: NewArtifact): Promise<number> {
  await tx.q.query(sql`DELETE FROM flotilla.artifacts WHERE buildid = ${a.buildid} AND name = ${a.name}`);
  const row = await one<{ id: number }>(
    tx.q,
    sql`
    INSERT INTO flotilla.artifacts (buildid, stepid, name, kind, compress, mode, object, created_at)
    VALUES (${a.buildid}, ${a.stepid}, ${a.name}, ${a.kind}, ${a.compress ?? null}, ${a.mode ?? null},
            lo_from_bytea(0, ''::bytea), ${now()})
    RETURNING id`,
  );
  return row.id;
}

/** One more block at the end of an artifact being written. */
export async function appendArtifact(tx: Tx, id: number, block: Uint8Array): Promise<void> {
  await tx.q.query(sql`
    WITH a AS (
      UPDATE flotilla.artifacts SET length = length + ${block.length}
      WHERE id = ${id} AND NOT complete
      RETURNING object, length - ${block.length} AS at
    )
    SELECT lo_put(a.object, a.at, ${Buffer.from(block.buffer, block.byteOffset, block.length)}) FROM a`);
}

/** The upload ended well: the artifact can be served. */
export async function completeArtifact(tx: Tx, id: number): Promise<void> {
  await tx.q.query(sql`UPDATE flotilla.artifacts SET complete = true WHERE id = ${id}`);
}

/** The upload failed: nothing of it stays (the trigger unlinks its object). */
export async function dropArtifact(tx: Tx, id: number): Promise<void> {
  await tx.q.query(sql`DELETE FROM flotilla.artifacts WHERE id = ${id}`);
}

/**
 * A build has ended: an upload it left unfinished goes, with its object. The step drops its
 * own on failure or stop, but not when its master died or lost the database mid-upload; such
 * builds end here too (finishBuild, from the master's own end or from a dead master's expiry).
 */
export async function dropIncompleteArtifacts(tx: Tx, buildid: number): Promise<void> {
  await tx.q.query(sql`DELETE FROM flotilla.artifacts WHERE buildid = ${buildid} AND NOT complete`);
}

/**
 * The bytes a build's artifacts take now, finished or being written (what its quota counts:
 * services/master/builds/steps/upload-limit.ts).
 */
export async function artifactBytesOfBuild(q: Queryable, buildid: number): Promise<number> {
  const row = await one<{ bytes: number }>(
    q,
    sql`SELECT coalesce(sum(length), 0)::float8 AS bytes FROM flotilla.artifacts WHERE buildid = ${buildid}`,
  );
  return row.bytes;
}

const ROW = sql`id, buildid, stepid, name, kind, compress, mode, length::float8 AS length, complete,
  object_key IS NOT NULL AS moved`;

export function artifactsOfStep(q: Queryable, stepid: number): Promise<ArtifactRow[]> {
  return many<ArtifactRow>(
    q,
    sql`SELECT ${ROW} FROM flotilla.artifacts WHERE stepid = ${stepid} ORDER BY id`,
  );
}

/** A complete artifact of a build by name (what a download step fetches). */
export function completeArtifactByName(
  q: Queryable,
  buildid: number,
  name: string,
): Promise<ArtifactRow | undefined> {
  return maybeOne<ArtifactRow>(
    q,
    sql`SELECT ${ROW} FROM flotilla.artifacts WHERE buildid = ${buildid} AND name = ${name} AND complete`,
  );
}

/** A complete artifact by id (what a download serves). */
export function completeArtifactById(q: RowSource, id: number): Promise<ArtifactRow | undefined> {
  return maybeOne<ArtifactRow>(q, sql`SELECT ${ROW} FROM flotilla.artifacts WHERE id = ${id} AND complete`);
}
