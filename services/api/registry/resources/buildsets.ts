import { sql } from '../../../core/db/pool.js';
import { buildset as buildsetEntity } from '../../../core/entities/buildset.js';
import { type Endpoint, entityResource, type Resource } from '../model.js';

export const buildset: Resource = entityResource(buildsetEntity, {
  counted: { table: 'buildsets', dims: ['complete'], scopes: [[], ['complete']] },
});

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
