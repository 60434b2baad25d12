// Source stamps are shared: the same branch, revision, repository, project, codebase and
// patch always map to one row, identified by Buildbot's ss_hash, so Buildbot and Flotilla
// find each other's stamps.
import { maybeOne, one, type Queryable, sql } from '../db/pool.js';
import { hashColumns } from './names.js';
import { now, type Tx } from './transaction.js';

export interface SourceStampSpec {
  branch?: string | null;
  revision?: string | null;
  repository?: string;
  project?: string;
  codebase?: string;
  patch_body?: string | null;
  patch_level?: number | null;
  patch_author?: string | null;
  patch_comment?: string | null;
  patch_subdir?: string | null;
}

export { hashColumns };

export async function findOrCreateSourceStamp(tx: Tx, ss: SourceStampSpec): Promise<number> {
  const repository = ss.repository ?? '';
  const project = ss.project ?? '';
  const codebase = ss.codebase ?? '';
  let patchid: number | null = null;
  if (ss.patch_body) {
    const p = await one<{ id: number }>(
      tx.q,
      sql`INSERT INTO patches (patchlevel, patch_base64, patch_author, patch_comment, subdir)
          VALUES (${ss.patch_level ?? 1}, ${Buffer.from(ss.patch_body, 'utf8').toString('base64')},
                  ${ss.patch_author ?? ''}, ${ss.patch_comment ?? ''}, ${ss.patch_subdir ?? null})
          RETURNING id`,
    );
    patchid = p.id;
  }
  const hash = hashColumns([ss.branch ?? null, ss.revision ?? null, repository, project, codebase, patchid]);
  // Insert-or-find: a concurrent insert of the same stamp is not an error. When the insert
  // waited for another transaction's stamp and found it committed, only a later statement
  // (a new snapshot) can see that row: the SELECT inside the insert's own statement cannot.
  const row = await maybeOne<{ id: number }>(
    tx.q,
    sql`WITH ins AS (
          INSERT INTO sourcestamps (ss_hash, branch, revision, patchid, repository, codebase, project, created_at)
          VALUES (${hash}, ${ss.branch ?? null}, ${ss.revision ?? null}, ${patchid}, ${repository}, ${codebase},
                  ${project}, ${now()})
          ON CONFLICT (ss_hash) DO NOTHING RETURNING id)
        SELECT id FROM ins UNION ALL SELECT id FROM sourcestamps WHERE ss_hash = ${hash} LIMIT 1`,
  );
  return (row ?? (await one<{ id: number }>(tx.q, sql`SELECT id FROM sourcestamps WHERE ss_hash = ${hash}`)))
    .id;
}

/** A source stamp's patch as a source step applies it (Buildbot's `(level, body, subdir)`). */
export interface PatchFacts {
  level: number;
  body: Buffer;
  /** Relative to the step's workdir; null: the workdir itself. */
  subdir: string | null;
  author: string;
  comment: string;
}

/** The patch of source stamp `ssid`, if it has one. */
export async function sourceStampPatch(q: Queryable, ssid: number): Promise<PatchFacts | undefined> {
  const row = await maybeOne<{
    patchlevel: number;
    patch_base64: string;
    subdir: string | null;
    patch_author: string;
    patch_comment: string;
  }>(
    q,
    sql`SELECT p.patchlevel, p.patch_base64, p.subdir, p.patch_author, p.patch_comment
        FROM sourcestamps ss JOIN patches p ON p.id = ss.patchid WHERE ss.id = ${ssid}`,
  );
  return row
    ? {
        level: row.patchlevel,
        body: Buffer.from(row.patch_base64, 'base64'),
        subdir: row.subdir,
        author: row.patch_author,
        comment: row.patch_comment,
      }
    : undefined;
}
