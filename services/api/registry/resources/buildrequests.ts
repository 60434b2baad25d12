import { sql } from '../../../core/db/pool.js';
import { buildrequest as buildrequestEntity } from '../../../core/entities/buildrequest.js';
import { type Endpoint, entityResource, type Resource } from '../model.js';

export const buildrequest: Resource = entityResource(buildrequestEntity, {
  counted: {
    table: 'buildrequests',
    dims: ['builderid', 'complete', 'claimed'],
    scopes: [
      [],
      ['builderid'],
      ['complete'],
      ['claimed'],
      ['builderid', 'complete'],
      ['builderid', 'claimed'],
      ['complete', 'claimed'],
      ['builderid', 'complete', 'claimed'],
    ],
  },
});

export const buildrequestEndpoints: Endpoint[] = [
  {
    pattern: 'buildrequests/n:buildrequestid',
    resource: buildrequest,
    collection: false,
    kind: 'rows',
    scope: (a) => [sql`a.id = ${a.buildrequestid}`],
    actions: ['cancel', 'set_priority'],
  },
  {
    pattern: 'buildrequests',
    resource: buildrequest,
    collection: true,
    kind: 'rows',
    scope: () => [],
    rootLink: 'buildrequests',
    countScope: () => ({}),
  },
  {
    pattern: 'builders/n:builderid/buildrequests',
    resource: buildrequest,
    collection: true,
    kind: 'rows',
    scope: (a) => [sql`a.builderid = ${a.builderid}`],
    countScope: (a) => ({ builderid: sql`${String(a.builderid)}::text` }),
  },
];
