import { sql } from '../../../core/db/pool.js';
import { scheduler as schedulerEntity, schedulerOwner } from '../../../core/entities/scheduler.js';
import { type Endpoint, entityResource, type PathArgs, type Resource } from '../model.js';

export const scheduler: Resource = entityResource(schedulerEntity);

const onMaster = (a: PathArgs) => sql`${schedulerOwner} = ${a.masterid}`;

export const schedulerEndpoints: Endpoint[] = [
  {
    pattern: 'schedulers/n:schedulerid',
    resource: scheduler,
    collection: false,
    kind: 'rows',
    scope: (a) => [sql`a.id = ${a.schedulerid}`],
    actions: ['enable'],
  },
  {
    pattern: 'masters/n:masterid/schedulers/n:schedulerid',
    resource: scheduler,
    collection: false,
    kind: 'rows',
    scope: (a) => [sql`a.id = ${a.schedulerid}`, onMaster(a)],
    actions: ['enable'],
  },
  {
    pattern: 'schedulers',
    resource: scheduler,
    collection: true,
    kind: 'rows',
    scope: () => [],
    rootLink: 'schedulers',
  },
  {
    pattern: 'masters/n:masterid/schedulers',
    resource: scheduler,
    collection: true,
    kind: 'rows',
    scope: (a) => [onMaster(a)],
  },
];
