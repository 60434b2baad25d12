// Change sources, each with the master that runs it (null when none does).
import { sql } from '../db/pool.js';
import { type Entity, field } from './field.js';
import { masterJson, masterType } from './master.js';
import { t } from './types.js';

/** The master that runs change source `a` (SQL over alias `a`). */
export const changesourceOwner = sql`(SELECT csm.masterid FROM changesource_masters csm WHERE csm.changesourceid = a.id)`;

export const changesource: Entity = {
  name: 'changesource',
  plural: 'changesources',
  key: 'changesourceid',
  table: 'changesources',
  fields: [
    field('changesourceid', t.integer, sql`a.id`),
    field('name', t.string, sql`a.name`),
    field('master', masterType, masterJson(changesourceOwner), { nullable: true }),
  ],
};
