// Schedulers, each with the master that runs it (null when none does).
import { sql } from '../db/pool.js';
import { type Entity, field } from './field.js';
import { masterJson, masterType } from './master.js';
import { t } from './types.js';

/** The master that runs scheduler `a` (SQL over alias `a`). */
export const schedulerOwner = sql`(SELECT sm.masterid FROM scheduler_masters sm WHERE sm.schedulerid = a.id)`;

export const scheduler: Entity = {
  name: 'scheduler',
  plural: 'schedulers',
  key: 'schedulerid',
  table: 'schedulers',
  fields: [
    field('schedulerid', t.integer, sql`a.id`),
    field('name', t.string, sql`a.name`),
    field('enabled', t.boolean, sql`(coalesce(a.enabled, 0) <> 0)`),
    field('master', masterType, masterJson(schedulerOwner), { nullable: true }),
  ],
};
