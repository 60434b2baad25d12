// Build sets, with their source stamps. Buildbot 4.3's fields (data/buildsets.py): 3.7's
// with rebuilt_buildid, the build a rebuild repeats (0021 adds the column).
import { sql } from '../db/pool.js';
import { type Entity, field } from './field.js';
import { buildsetSourcestampsJson, sourcestampType } from './sourcestamp.js';
import { t } from './types.js';

const s = { sqlNullSemantics: true };

export const buildset: Entity = {
  name: 'buildset',
  plural: 'buildsets',
  key: 'bsid',
  table: 'buildsets',
  fields: [
    field('bsid', t.integer, sql`a.id`, s),
    field('external_idstring', t.string, sql`a.external_idstring`, { ...s, nullable: true }),
    field('reason', t.string, sql`a.reason`, { ...s, nullableSql: true }),
    field('rebuilt_buildid', t.integer, sql`a.rebuilt_buildid`, { ...s, nullable: true }),
    field('submitted_at', t.integer, sql`a.submitted_at`, s),
    field('complete', t.boolean, sql`(a.complete <> 0)`, {
      equals: (_a, v) => (v ? sql`a.complete <> 0` : sql`a.complete = 0`),
    }),
    field('complete_at', t.integer, sql`a.complete_at`, { ...s, nullable: true }),
    field('results', t.integer, sql`a.results`, { ...s, nullable: true }),
    field('sourcestamps', t.list(sourcestampType), buildsetSourcestampsJson(sql`a.id`)),
    field('parent_buildid', t.integer, sql`a.parent_buildid`, { ...s, nullable: true }),
    field('parent_relationship', t.string, sql`a.parent_relationship`, { ...s, nullable: true }),
  ],
};
