// Codebases (Buildbot 4.3, db/codebases.py and data/codebases.py): found or created by
// (projectid, name_hash), a new one with its name as its slug (find_codebase_id); then
// update_codebase_info sets its project and slug and announces `codebases/<id>/update`. A
// master does both for each configured codebase at start (botmaster.reconfig_codebases); a
// GitPoller given a codebase only finds (or creates) it.
// Ours: an update is announced when something changed or the codebase was just created
// (Buildbot announces every one, and it updates at each start), as projects' (./projects.ts).
import { maybeOne, sql } from '../db/pool.js';
import { codebase } from '../entities/codebase.js';
import { codebaseKeys } from '../events/keys.js';
import { entity } from './entities.js';
import { nameHash } from './names.js';
import type { Tx } from './transaction.js';

/** The codebase's id, created (slug = name) if there is none; safe against a concurrent creation. */
export async function findCodebaseId(
  tx: Tx,
  projectid: number,
  name: string,
): Promise<{ id: number; created: boolean }> {
  const hash = nameHash(name);
  const find = () =>
    maybeOne<{ id: number }>(
      tx.q,
      sql`SELECT id FROM codebases WHERE projectid = ${projectid} AND name_hash = ${hash}`,
    );
  const found = await find();
  if (found) return { id: found.id, created: false };
  const inserted = await maybeOne<{ id: number }>(
    tx.q,
    sql`INSERT INTO codebases (projectid, name, name_hash, slug) VALUES (${projectid}, ${name}, ${hash}, ${name})
        ON CONFLICT (projectid, name_hash) DO NOTHING RETURNING id`,
  );
  if (inserted) return { id: inserted.id, created: true };
  return { id: (await find())!.id, created: false };
}

/**
 * Set a codebase's project and slug; announced (`codebases/<id>/update` with the codebase,
 * as update_codebase_info) when anything changed or `created` says it is new.
 */
export async function updateCodebaseInfo(
  tx: Tx,
  codebaseid: number,
  info: { projectid: number; slug: string },
  created: boolean,
): Promise<void> {
  const rows = await tx.q.query(sql`
    UPDATE codebases SET projectid = ${info.projectid}, slug = ${info.slug}
    WHERE id = ${codebaseid} AND (projectid, slug) IS DISTINCT FROM (${info.projectid}, ${info.slug})
    RETURNING id`);
  if (rows.length === 0 && !created) return;
  tx.out.addAll(codebaseKeys(codebaseid), 'update', await entity(tx.q, codebase, codebaseid));
}
