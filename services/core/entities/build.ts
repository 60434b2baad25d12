// Builds. Events carry `properties: {}`, as Buildbot's do; a read that names properties
// (`property=...`) gets them.
import { type SQLQuery, sql } from '../db/pool.js';
import { type Entity, field, propertyNames } from './field.js';
import { t } from './types.js';

/** Build properties as Buildbot answers them: {name: [value, source]}, or null when none. */
export function buildPropertiesJson(buildid: SQLQuery, names: readonly string[] | null): SQLQuery {
  const sel = names ? propertyNames(names) : { all: true, names: [] };
  return sql`(SELECT json_object_agg(bp.name, json_build_array(flotilla.try_json(bp.value), bp.source))
      FROM build_properties bp WHERE bp.buildid = ${buildid}
      AND (${sel.all}::boolean OR bp.name = ANY(${sel.names}::text[])))`;
}

const s = { sqlNullSemantics: true };

export const build: Entity = {
  name: 'build',
  plural: 'builds',
  key: 'buildid',
  table: 'builds',
  fields: [
    field('buildid', t.integer, sql`a.id`, s),
    field('number', t.integer, sql`a.number`, s),
    field('builderid', t.integer, sql`a.builderid`, s),
    field('buildrequestid', t.integer, sql`a.buildrequestid`, s),
    field('workerid', t.integer, sql`a.workerid`, { ...s, nullableSql: true }),
    field('masterid', t.integer, sql`a.masterid`, s),
    field('started_at', t.datetime, sql`a.started_at`, s),
    field('complete', t.boolean, sql`(a.complete_at IS NOT NULL)`),
    field('complete_at', t.datetime, sql`a.complete_at`, { ...s, nullable: true }),
    field('results', t.integer, sql`a.results`, { ...s, nullable: true }),
    field('state_string', t.string, sql`a.state_string`, s),
    field('properties', t.sourcedproperties, sql`'{}'::json`, {
      nullable: true,
      withProperties: (_args, names) => sql`coalesce(${buildPropertiesJson(sql`a.id`, names)}, '{}'::json)`,
    }),
  ],
};
