import { sql } from '../../../core/db/pool.js';
import { master as masterEntity } from '../../../core/entities/master.js';
import { type Endpoint, entityResource, type PathArgs, type Resource } from '../model.js';

export const master: Resource = entityResource(masterEntity);

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
