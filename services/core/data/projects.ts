// Projects (Buildbot 4.3, db/projects.py and data/projects.py): found or created by
// name_hash (the sha1 of the name), a new one with its name as its slug (find_project_id);
// update_project_info then sets the slug, description and its format and HTML. A configured
// builder names its project by id (builders.projectid, ./builders.ts). An update is announced
// only when something changed (Buildbot announces every one; it updates at each start).
import { maybeOne, one, type Queryable, type SQLQuery, sql } from '../db/pool.js';
import { project } from '../entities/project.js';
import { projectKeys } from '../events/keys.js';
import { entity } from './entities.js';
import { nameHash } from './names.js';
import type { Tx } from './transaction.js';

export interface ProjectInfo {
  slug: string;
  description: string | null;
  description_format: string | null;
  description_html: string | null;
}

/** The project's id, created (slug = name) if there is none; safe against a concurrent creation. */
export async function findProjectId(tx: Tx, name: string): Promise<number> {
  const hash = nameHash(name);
  const found = await maybeOne<{ id: number }>(tx.q, sql`SELECT id FROM projects WHERE name_hash = ${hash}`);
  if (found) return found.id;
  await tx.q.query(sql`INSERT INTO projects (name, name_hash, slug) VALUES (${name}, ${hash}, ${name})
                       ON CONFLICT (name_hash) DO NOTHING`);
  return (await one<{ id: number }>(tx.q, sql`SELECT id FROM projects WHERE name_hash = ${hash}`)).id;
}

/** The project's id, if there is one by that name (find_project_id with auto_create=False). */
export async function projectIdOf(q: Queryable, name: string): Promise<number | undefined> {
  return (await maybeOne<{ id: number }>(q, sql`SELECT id FROM projects WHERE name_hash = ${nameHash(name)}`))
    ?.id;
}

/**
 * Set a project's slug and description; true (and a `projects/<id>/update` event with the
 * project, as Buildbot 4.3's update_project_info produces) when anything changed.
 */
export async function updateProjectInfo(tx: Tx, projectid: number, info: ProjectInfo): Promise<boolean> {
  const rows = await tx.q.query(sql`
    UPDATE projects SET slug = ${info.slug}, description = ${info.description},
           description_format = ${info.description_format}, description_html = ${info.description_html}
    WHERE id = ${projectid}
      AND (slug, description, description_format, description_html)
          IS DISTINCT FROM (${info.slug}, ${info.description}, ${info.description_format}, ${info.description_html})
    RETURNING id`);
  if (rows.length === 0) return false;
  tx.out.addAll(projectKeys(projectid), 'update', await entity(tx.q, project, projectid));
  return true;
}

/** The project of a build's builder (id and name); no row when the builder names none. Read with a build's other facts at its start (build-start.ts). */
export const buildProjectQuery = (buildid: number): SQLQuery =>
  sql`SELECT p.id, p.name FROM builds b JOIN builders bl ON bl.id = b.builderid
        JOIN projects p ON p.id = bl.projectid WHERE b.id = ${buildid}`;
