import { sql } from '../../../core/db/pool.js';
import { type Endpoint, field, type PathArgs, type Resource } from '../model.js';
import { t } from '../types.js';

export const master: Resource = {
  name: 'master',
  plural: 'masters',
  key: 'masterid',
  from: sql`masters a`,
  fields: [
    field('masterid', t.integer, sql`a.id`),
    field('name', t.string, sql`a.name`),
    field('active', t.boolean, sql`(a.active <> 0)`),
    field('last_active', t.datetime, sql`a.last_active`),
  ],
};

const runsBuilder = (a: PathArgs) =>
  sql`EXISTS (SELECT 1 FROM builder_masters bm WHERE bm.masterid = a.id AND bm.builderid = ${a.builderid})`;

export const masterEndpoints: Endpoint[] = [
  {
    pattern: 'masters/n:masterid',
    resource: master,
    collection: false,
    kind: 'rows',
    scope: (a) => [sql`a.id = ${a.masterid}`],
  },
  {
    pattern: 'builders/n:builderid/masters/n:masterid',
    resource: master,
    collection: false,
    kind: 'rows',
    scope: (a) => [sql`a.id = ${a.masterid}`, runsBuilder(a)],
  },
  {
    pattern: 'masters',
    resource: master,
    collection: true,
    kind: 'rows',
    scope: () => [],
    rootLink: 'masters',
  },
  {
    pattern: 'builders/n:builderid/masters',
    resource: master,
    collection: true,
    kind: 'rows',
    scope: (a) => [runsBuilder(a)],
  },
];
