import { patchJson } from '../../../core/data/entities.js';
import { sql } from '../../../core/db/pool.js';
import { type Endpoint, field, type Resource } from '../model.js';
import { t } from '../types.js';
import { patchType } from './common.js';

export const sourcestamp: Resource = {
  name: 'sourcestamp',
  plural: 'sourcestamps',
  key: 'ssid',
  from: sql`sourcestamps a`,
  counted: { table: 'sourcestamps', dims: [], scopes: [[]] },
  fields: [
    field('ssid', t.integer, sql`a.id`),
    field('revision', t.string, sql`a.revision`, { nullable: true }),
    field('branch', t.string, sql`a.branch`, { nullable: true }),
    field('repository', t.string, sql`a.repository`),
    field('project', t.string, sql`a.project`),
    field('codebase', t.string, sql`a.codebase`),
    field('patch', patchType, patchJson(sql`a.patchid`), { nullable: true }),
    field('created_at', t.datetime, sql`a.created_at`),
  ],
};

export const sourcestampEndpoints: Endpoint[] = [
  {
    pattern: 'sourcestamps/n:ssid',
    resource: sourcestamp,
    collection: false,
    kind: 'rows',
    scope: (a) => [sql`a.id = ${a.ssid}`],
  },
  {
    pattern: 'sourcestamps',
    resource: sourcestamp,
    collection: true,
    kind: 'rows',
    scope: () => [],
    rootLink: 'sourcestamps',
    countScope: () => ({}),
  },
];
