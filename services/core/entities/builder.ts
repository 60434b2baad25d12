// Builders, with the masters that run them, their project and their tags. The fields are
// Buildbot 4.3's (data/builders.py): 3.7's with description_format, description_html and
// projectid, which 0021 adds to the table, and `name` a string.
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
    // A String in 4.3 (an Identifier in 3.7): names may hold spaces (`s:buildername` paths).
    field('name', t.string, sql`a.name`),
    field(
      'masterids',
      t.list(t.integer),
      sql`ARRAY(SELECT bm.masterid FROM builder_masters bm WHERE bm.builderid = a.id ORDER BY bm.masterid)`,
    ),
    field('description', t.string, sql`a.description`, { nullable: true }),
    field('description_format', t.string, sql`a.description_format`, { nullable: true }),
    field('description_html', t.string, sql`a.description_html`, { nullable: true }),
    field('projectid', t.integer, sql`a.projectid`, { nullable: true }),
    field(
      'tags',
      t.list(t.string),
      sql`ARRAY(SELECT tg.name FROM builders_tags bt JOIN tags tg ON tg.id = bt.tagid
                WHERE bt.builderid = a.id ORDER BY bt.id)`,
    ),
  ],
};
