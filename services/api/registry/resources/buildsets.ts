import { buildsetSourcestampsJson } from '../../../core/data/entities.js';
import { sql } from '../../../core/db/pool.js';
import { type Endpoint, field, type Resource } from '../model.js';
import { t } from '../types.js';
import { sourcestampType } from './common.js';

const s = { sqlNullSemantics: true };

export const buildset: Resource = {
  name: 'buildset',
  plural: 'buildsets',
  key: 'bsid',
  from: sql`buildsets a`,
  counted: { table: 'buildsets', dims: ['complete'], scopes: [[], ['complete']] },
  fields: [
    field('bsid', t.integer, sql`a.id`, s),
    field('external_idstring', t.string, sql`a.external_idstring`, { ...s, nullable: true }),
    field('reason', t.string, sql`a.reason`, { ...s, nullableSql: true }),
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

export const buildsetEndpoints: Endpoint[] = [
  {
    pattern: 'buildsets/n:bsid',
    resource: buildset,
    collection: false,
    kind: 'rows',
    scope: (a) => [sql`a.id = ${a.bsid}`],
  },
  {
    pattern: 'buildsets',
    resource: buildset,
    collection: true,
    kind: 'rows',
    scope: () => [],
    rootLink: 'buildsets',
    countScope: () => ({}),
  },
];
