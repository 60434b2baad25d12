// Buildbot 4.3's codebases (data/codebases.py): a named codebase of a project, with a slug.
// Read by the API (services/api/registry/resources/codebases.ts) and carried by the
// `codebases/<id>/update` events a master sends when it records a configured one.
import { sql } from '../db/pool.js';
import { type Entity, field } from './field.js';
import { t } from './types.js';

export const codebase: Entity = {
  name: 'codebase',
  plural: 'codebases',
  key: 'codebaseid',
  table: 'codebases',
  fields: [
    field('codebaseid', t.integer, sql`a.id`),
    field('projectid', t.integer, sql`a.projectid`),
    field('name', t.identifier(70), sql`a.name`),
    field('slug', t.identifier(70), sql`a.slug`),
  ],
};
