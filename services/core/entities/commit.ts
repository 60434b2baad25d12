// Buildbot 4.3's commits of a codebase (data/codebase_commits.py): what a GitPoller given a
// codebase records for each new commit, chained by parent_commitid. Read by the API and
// carried by the `commits/<id>/new` events.
import { sql } from '../db/pool.js';
import { type Entity, field } from './field.js';
import { t } from './types.js';

export const commit: Entity = {
  name: 'commit',
  plural: 'commits',
  key: 'commitid',
  table: 'codebase_commits',
  fields: [
    field('commitid', t.integer, sql`a.id`),
    field('codebaseid', t.integer, sql`a.codebaseid`),
    field('author', t.string, sql`a.author`),
    field('committer', t.string, sql`a.committer`, { nullable: true }),
    field('comments', t.string, sql`a.comments`),
    field('when_timestamp', t.integer, sql`a.when_timestamp`),
    field('revision', t.string, sql`a.revision`),
    field('parent_commitid', t.integer, sql`a.parent_commitid`, { nullable: true }),
  ],
};
