// Projects (Buildbot 4.3, data/projects.py): a name, a slug and a description, and the
// builders that name the project (builders.projectid). `active` says whether one of its
// builders runs on a master now; Buildbot answers it only when the request filters on it
// (null otherwise), Flotilla always (docs/compatibility.md).
import { sql } from '../db/pool.js';
import { type Entity, field } from './field.js';
import { t } from './types.js';

/** A project is active when one of its builders is on a master (db/projects.py get_active_projects). */
const active = sql`EXISTS (SELECT 1 FROM builders pb JOIN builder_masters pbm ON pbm.builderid = pb.id
    WHERE pb.projectid = a.id)`;

export const project: Entity = {
  name: 'project',
  plural: 'projects',
  key: 'projectid',
  table: 'projects',
  fields: [
    field('projectid', t.integer, sql`a.id`),
    field('name', t.identifier(70), sql`a.name`),
    field('slug', t.identifier(70), sql`a.slug`),
    field('active', t.boolean, active, { nullable: true }),
    field('description', t.string, sql`a.description`, { nullable: true }),
    field('description_format', t.string, sql`a.description_format`, { nullable: true }),
    field('description_html', t.string, sql`a.description_html`, { nullable: true }),
  ],
};
