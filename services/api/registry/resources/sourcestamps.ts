import { sql } from '../../../core/db/pool.js';
import { sourcestamp as sourcestampEntity } from '../../../core/entities/sourcestamp.js';
import { type Endpoint, entityResource, type Resource } from '../model.js';

export const sourcestamp: Resource = entityResource(sourcestampEntity, {
  counted: { table: 'sourcestamps', dims: [], scopes: [[]] },
});

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
  // Buildbot 4.3 (data/sourcestamps.py): a build set's stamps. Its pattern takes any segment,
  // but the parent, `buildsets/n:bsid`, must exist first, so the segment is an id here.
  {
    pattern: 'buildsets/:buildsetid/sourcestamps',
    resource: sourcestamp,
    collection: true,
    kind: 'rows',
    scope: (a) => [
      sql`a.id IN (SELECT bss.sourcestampid FROM buildset_sourcestamps bss
            WHERE bss.buildsetid = ${Number(a.buildsetid)})`,
    ],
  },
];
