// Buildbot 4.3's branches of a codebase (data/codebase_branches.py): a branch's newest
// recorded commit and when it was recorded. Read by the API and carried by the
// `branches/<id>/update` events.
import { sql } from '../db/pool.js';
import { type Entity, field } from './field.js';
import { t } from './types.js';

// Buildbot declares commitid an Integer though the column may be NULL (a branch whose commit
// was deleted): the spec says integer, the value may be null.
export const branch: Entity = {
  name: 'branch',
  plural: 'branches',
  key: 'branchid',
  table: 'codebase_branches',
  fields: [
    field('branchid', t.integer, sql`a.id`),
    field('codebaseid', t.integer, sql`a.codebaseid`),
    field('name', t.string, sql`a.name`),
    field('commitid', t.integer, sql`a.commitid`, { nullableSql: true }),
    field('last_timestamp', t.integer, sql`a.last_timestamp`),
  ],
};
