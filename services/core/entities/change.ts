// Changes, with their files, properties and source stamp.
import { sql } from '../db/pool.js';
import { type Entity, field } from './field.js';
import { sourcestampJson, sourcestampType } from './sourcestamp.js';
import { t } from './types.js';

// Buildbot stores change properties as [value, "Change"]; a value stored any other way is
// taken whole, with "Change" as its source.
const changeProperty = sql`CASE
    WHEN json_typeof(flotilla.try_json(cp.property_value)) = 'array'
     AND json_array_length(flotilla.try_json(cp.property_value)) = 2
     AND json_typeof(flotilla.try_json(cp.property_value) -> 1) = 'string'
     AND flotilla.try_json(cp.property_value) ->> 1 = 'Change'
    THEN flotilla.try_json(cp.property_value)
    ELSE json_build_array(flotilla.try_json(cp.property_value), 'Change') END`;

export const change: Entity = {
  name: 'change',
  plural: 'changes',
  key: 'changeid',
  table: 'changes',
  fields: [
    field('changeid', t.integer, sql`a.changeid`, { sqlNullSemantics: true }),
    field(
      'parent_changeids',
      t.list(t.integer),
      sql`(CASE WHEN a.parent_changeids IS NULL OR a.parent_changeids = 0 THEN ARRAY[]::int[] ELSE ARRAY[a.parent_changeids] END)`,
    ),
    field('author', t.string, sql`a.author`),
    field('committer', t.string, sql`a.committer`, { nullableSql: true }),
    // In the order they were added.
    field(
      'files',
      t.list(t.string),
      sql`ARRAY(SELECT cf.filename::text FROM change_files cf WHERE cf.changeid = a.changeid ORDER BY cf.ctid)`,
    ),
    field('comments', t.string, sql`a.comments`),
    field('revision', t.string, sql`a.revision`, { nullable: true }),
    field('when_timestamp', t.integer, sql`a.when_timestamp`),
    field('branch', t.string, sql`a.branch`, { nullable: true }),
    field('category', t.string, sql`a.category`, { nullable: true }),
    field('revlink', t.string, sql`a.revlink`, { nullable: true }),
    field(
      'properties',
      t.sourcedproperties,
      sql`coalesce((SELECT json_object_agg(cp.property_name, ${changeProperty}) FROM change_properties cp
           WHERE cp.changeid = a.changeid AND flotilla.try_json(cp.property_value) IS NOT NULL), '{}'::json)`,
    ),
    field('repository', t.string, sql`a.repository`),
    field('project', t.string, sql`a.project`),
    field('codebase', t.string, sql`a.codebase`),
    field('sourcestamp', sourcestampType, sourcestampJson(sql`a.sourcestampid`)),
  ],
};
