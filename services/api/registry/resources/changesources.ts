import { sql } from '../../../core/db/pool.js';
import {
  changesource as changesourceEntity,
  changesourceOwner,
} from '../../../core/entities/changesource.js';
import { type Endpoint, entityResource, type PathArgs, type Resource } from '../model.js';

export const changesource: Resource = entityResource(changesourceEntity);

const onMaster = (a: PathArgs) => sql`${changesourceOwner} = ${a.masterid}`;

export const changesourceEndpoints: Endpoint[] = [
  {
    pattern: 'changesources/n:changesourceid',
    resource: changesource,
    collection: false,
    kind: 'rows',
    scope: (a) => [sql`a.id = ${a.changesourceid}`],
  },
  {
    pattern: 'masters/n:masterid/changesources/n:changesourceid',
    resource: changesource,
    collection: false,
    kind: 'rows',
    scope: (a) => [sql`a.id = ${a.changesourceid}`, onMaster(a)],
  },
  {
    pattern: 'changesources',
    resource: changesource,
    collection: true,
    kind: 'rows',
    scope: () => [],
    rootLink: 'changesources',
  },
  {
    pattern: 'masters/n:masterid/changesources',
    resource: changesource,
    collection: true,
    kind: 'rows',
    scope: (a) => [onMaster(a)],
  },
];
