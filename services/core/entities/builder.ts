// Builders, with the masters that run them and their tags.
import { sql } from '../db/pool.js';
import { type Entity, field } from './field.js';
import { t } from './types.js';

export const builder: Entity = {
  name: 'builder',
  plural: 'builders',
  key: 'builderid',
  table: 'builders',
  fields: [
    field('builderid', t.integer, sql`a.id`),
    field('name', t.identifier(70), sql`a.name`),
    field(
      'masterids',
      t.list(t.integer),
      sql`ARRAY(SELECT bm.masterid FROM builder_masters bm WHERE bm.builderid = a.id ORDER BY bm.masterid)`,
    ),
    field('description', t.string, sql`a.description`, { nullable: true }),
    field(
      'tags',
      t.list(t.string),
      sql`ARRAY(SELECT tg.name FROM builders_tags bt JOIN tags tg ON tg.id = bt.tagid
                WHERE bt.builderid = a.id ORDER BY bt.id)`,
    ),
  ],
};
