// Masters; also the shape of the master that schedulers and change sources name.
import { type SQLQuery, sql } from '../db/pool.js';
import { type Entity, type Field, field, jsonOf } from './field.js';
import { t } from './types.js';

function masterFields(m: string): Field[] {
  const c = (col: string) => sql.ident(m, col);
  return [
    field('masterid', t.integer, c('id')),
    field('name', t.string, c('name')),
    field('active', t.boolean, sql`(${c('active')} <> 0)`),
    field('last_active', t.datetime, c('last_active')),
  ];
}

export const master: Entity = {
  name: 'master',
  plural: 'masters',
  key: 'masterid',
  table: 'masters',
  fields: masterFields('a'),
};

export const masterType = t.entity('master', master.fields);

/** The master with id `masterid` as JSON, or null. */
export function masterJson(masterid: SQLQuery): SQLQuery {
  return sql`(SELECT ${jsonOf(masterFields('m'))} FROM masters m WHERE m.id = ${masterid})`;
}
