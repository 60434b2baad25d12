import { masterJson } from '../../../core/data/entities.js';
import { sql } from '../../../core/db/pool.js';
import { type Endpoint, field, type PathArgs, type Resource } from '../model.js';
import { t } from '../types.js';
import { masterType } from './common.js';

const ownerOf = sql`(SELECT csm.masterid FROM changesource_masters csm WHERE csm.changesourceid = a.id)`;

export const changesource: Resource = {
  name: 'changesource',
  plural: 'changesources',
  key: 'changesourceid',
  from: sql`changesources a`,
  fields: [
    field('changesourceid', t.integer, sql`a.id`),
    field('name', t.string, sql`a.name`),
    field('master', masterType, masterJson(ownerOf), { nullable: true }),
  ],
};

const onMaster = (a: PathArgs) => sql`${ownerOf} = ${a.masterid}`;

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
