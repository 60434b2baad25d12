// Build requests. Events carry `properties: null`, as Buildbot's do; a read that names
// properties (`property=...`) gets those of the request's build set.
import { sql } from '../db/pool.js';
import { type Entity, field, propertyNames } from './field.js';
import { t } from './types.js';

const s = { sqlNullSemantics: true };
const claim = (col: string) =>
  sql`(SELECT ${sql.ident('c', col)} FROM buildrequest_claims c WHERE c.brid = a.id)`;

export const buildrequest: Entity = {
  name: 'buildrequest',
  plural: 'buildrequests',
  key: 'buildrequestid',
  table: 'buildrequests',
  fields: [
    field('buildrequestid', t.integer, sql`a.id`, s),
    field('buildsetid', t.integer, sql`a.buildsetid`, s),
    field('builderid', t.integer, sql`a.builderid`, s),
    field('priority', t.integer, sql`a.priority`, s),
    field('claimed', t.boolean, sql`EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = a.id)`, {
      // The few unclaimed requests are kept in two sets, pending and complete (migrations 0004,
      // 0008); an anti-join would read every claim. claimed=false means no claim row, whatever
      // complete is (Buildbot's semantics), so it reads both. ANY(ARRAY(...)) reads the sets
      // first and looks each request up by id, whatever the statistics say.
      equals: (_a, v) =>
        v
          ? sql`EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = a.id)`
          : sql`a.id = ANY (ARRAY(SELECT u.brid FROM flotilla.unclaimed_buildrequests u
                                  UNION ALL
                                  SELECT u.brid FROM flotilla.unclaimed_complete_buildrequests u))`,
    }),
    field('claimed_at', t.datetime, claim('claimed_at'), { ...s, nullable: true }),
    field('claimed_by_masterid', t.integer, claim('masterid'), { ...s, nullable: true }),
    field('complete', t.boolean, sql`(coalesce(a.complete, 0) <> 0)`, {
      // Matches the partial index on pending requests.
      equals: (_a, v) => (v ? sql`coalesce(a.complete, 0) <> 0` : sql`coalesce(a.complete, 0) = 0`),
    }),
    field('results', t.integer, sql`a.results`, { ...s, nullable: true }),
    field('submitted_at', t.datetime, sql`a.submitted_at`, s),
    field('complete_at', t.datetime, sql`a.complete_at`, { ...s, nullable: true }),
    field('waited_for', t.boolean, sql`(coalesce(a.waited_for, 0) <> 0)`),
    field('properties', t.sourcedproperties, sql`NULL::json`, {
      nullable: true,
      withProperties: (_args, names) => {
        const sel = propertyNames(names);
        return sql`(SELECT json_object_agg(bp.property_name, flotilla.try_json(bp.property_value))
          FROM buildset_properties bp WHERE bp.buildsetid = a.buildsetid
          AND (${sel.all}::boolean OR bp.property_name = ANY(${sel.names}::text[])))`;
      },
    }),
  ],
};
