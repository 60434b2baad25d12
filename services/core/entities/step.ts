// Steps of a build.
import { sql } from '../db/pool.js';
import { type Entity, field } from './field.js';
import { t } from './types.js';

export const step: Entity = {
  name: 'step',
  plural: 'steps',
  key: 'stepid',
  table: 'steps',
  fields: [
    field('stepid', t.integer, sql`a.id`),
    field('number', t.integer, sql`a.number`),
    field('name', t.identifier(50), sql`a.name`),
    field('buildid', t.integer, sql`a.buildid`),
    field('started_at', t.datetime, sql`a.started_at`, { nullable: true }),
    field('complete', t.boolean, sql`(a.complete_at IS NOT NULL)`),
    field('complete_at', t.datetime, sql`a.complete_at`, { nullable: true }),
    field('results', t.integer, sql`a.results`, { nullable: true }),
    field('state_string', t.string, sql`a.state_string`),
    field(
      'urls',
      t.list(
        t.entity('Url', [
          { name: 'name', type: t.string },
          { name: 'url', type: t.string },
        ]),
      ),
      sql`coalesce(flotilla.try_json(a.urls_json), '[]'::json)`,
    ),
    field('hidden', t.boolean, sql`(a.hidden <> 0)`),
  ],
};
