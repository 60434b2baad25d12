import { masterJson } from '../../../core/data/entities.js';
import { sql } from '../../../core/db/pool.js';
import { type Endpoint, field, type PathArgs, type Resource } from '../model.js';
import { t } from '../types.js';
import { masterType } from './common.js';

const ownerOf = sql`(SELECT sm.masterid FROM scheduler_masters sm WHERE sm.schedulerid = a.id)`;

export const scheduler: Resource = {
  name: 'scheduler',
  plural: 'schedulers',
  key: 'schedulerid',
  from: sql`schedulers a`,
  fields: [
    field('schedulerid', t.integer, sql`a.id`),
    field('name', t.string, sql`a.name`),
    field('enabled', t.boolean, sql`(coalesce(a.enabled, 0) <> 0)`),
    field('master', masterType, masterJson(ownerOf), { nullable: true }),
  ],
};

const onMaster = (a: PathArgs) => sql`${ownerOf} = ${a.masterid}`;

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
