// Logs of a step.
import { sql } from '../db/pool.js';
import { type Entity, field } from './field.js';
import { t } from './types.js';

export const log: Entity = {
  name: 'log',
  plural: 'logs',
  key: 'logid',
  table: 'logs',
  fields: [
    field('logid', t.integer, sql`a.id`),
    field('name', t.string, sql`a.name`),
    field('slug', t.identifier(50), sql`a.slug`),
    field('stepid', t.integer, sql`a.stepid`),
    field('complete', t.boolean, sql`(a.complete <> 0)`),
    field('num_lines', t.integer, sql`a.num_lines`),
    field('type', t.identifier(1), sql`a.type`),
  ],
};
