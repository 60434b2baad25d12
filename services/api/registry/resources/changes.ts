import { changesOfBuild, newestChangeOfStamp } from '../../../core/data/changes-of-build.js';
import { sql } from '../../../core/db/pool.js';
import { change as changeEntity } from '../../../core/entities/change.js';
import { type Endpoint, entityResource, type Resource } from '../model.js';
import { buildIdOf } from './builds.js';

// Buildbot answers /changes newest first.
export const change: Resource = entityResource(changeEntity, {
  counted: { table: 'changes', dims: [], scopes: [[]] },
  defaultOrder: ['-changeid'],
});

export const changeEndpoints: Endpoint[] = [
  {
    pattern: 'changes/n:changeid',
    resource: change,
    collection: false,
    kind: 'rows',
    scope: (a) => [sql`a.changeid = ${a.changeid}`],
  },
  {
    pattern: 'changes',
    resource: change,
    collection: true,
    kind: 'rows',
    scope: () => [],
    rootLink: 'changes',
    countScope: () => ({}),
  },
  {
    pattern: 'builders/n:builderid/builds/n:build_number/changes',
    resource: change,
    collection: true,
    kind: 'rows',
    scope: (a) => [changesOfBuild(buildIdOf(a))],
  },
  {
    pattern: 'builds/n:buildid/changes',
    resource: change,
    collection: true,
    kind: 'rows',
    scope: (a) => [changesOfBuild(buildIdOf(a))],
  },
  {
    pattern: 'sourcestamps/n:ssid/changes',
    resource: change,
    collection: true,
    kind: 'rows',
    // Buildbot answers only the newest change of the stamp.
    scope: (a) => [newestChangeOfStamp(a.ssid)],
  },
];
