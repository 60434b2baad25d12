import { sql } from '../../../core/db/pool.js';
import { type Endpoint, field, type PathArgs, type Resource } from '../model.js';
import { t } from '../types.js';
import { builderIdOf } from './builders.js';
import { propertyNames } from './common.js';

/** Build properties as Buildbot answers them: {name: [value, source]}, or null when none. */
export function buildPropertiesJson(buildid: ReturnType<typeof sql>, names: readonly string[] | null) {
  const sel = names ? propertyNames(names) : { all: true, names: [] };
  return sql`(SELECT json_object_agg(bp.name, json_build_array(flotilla.try_json(bp.value), bp.source))
      FROM build_properties bp WHERE bp.buildid = ${buildid}
      AND (${sel.all}::boolean OR bp.name = ANY(${sel.names}::text[])))`;
}

const s = { sqlNullSemantics: true };

export const build: Resource = {
  name: 'build',
  plural: 'builds',
  key: 'buildid',
  from: sql`builds a`,
  counted: {
    table: 'builds',
    dims: ['builderid', 'workerid', 'complete'],
    scopes: [[], ['builderid'], ['complete'], ['builderid', 'complete'], ['workerid']],
  },
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

/** The build named in a path: by id, or by builder (id or name) and number. */
export function buildIdOf(args: PathArgs) {
  if (args.buildid !== undefined) return sql`${args.buildid}::int`;
  const number = args.build_number ?? args.number;
  return sql`(SELECT bb.id FROM builds bb WHERE bb.builderid = ${builderIdOf(args)} AND bb.number = ${number})`;
}

const one = (pattern: string, scope: Endpoint['scope']): Endpoint => ({
  pattern,
  resource: build,
  collection: false,
  kind: 'rows',
  scope,
  actions: ['stop', 'rebuild'],
});
const many = (
  pattern: string,
  scope: Endpoint['scope'],
  extra: Pick<Endpoint, 'rootLink' | 'countScope'> = {},
): Endpoint => ({ pattern, resource: build, collection: true, kind: 'rows', scope, ...extra });

export const buildEndpoints: Endpoint[] = [
  one('builds/n:buildid', (a) => [sql`a.id = ${a.buildid}`]),
  one('builders/n:builderid/builds/n:number', (a) => [
    sql`a.builderid = ${a.builderid}`,
    sql`a.number = ${a.number}`,
  ]),
  one('builders/i:buildername/builds/n:number', (a) => [
    sql`a.builderid = ${builderIdOf(a)}`,
    sql`a.number = ${a.number}`,
  ]),
  many('builds', () => [], { rootLink: 'builds', countScope: () => ({}) }),
  many('builders/n:builderid/builds', (a) => [sql`a.builderid = ${a.builderid}`], {
    countScope: (a) => ({ builderid: sql`${String(a.builderid)}::text` }),
  }),
  many('builders/i:buildername/builds', (a) => [sql`a.builderid = ${builderIdOf(a)}`], {
    countScope: (a) => ({ builderid: sql`(${builderIdOf(a)})::text` }),
  }),
  many('buildrequests/n:buildrequestid/builds', (a) => [sql`a.buildrequestid = ${a.buildrequestid}`]),
  many('changes/n:changeid/builds', (a) => [
    sql`a.buildrequestid IN (SELECT br.id FROM changes c
          JOIN buildset_sourcestamps bss ON bss.sourcestampid = c.sourcestampid
          JOIN buildrequests br ON br.buildsetid = bss.buildsetid
          WHERE c.changeid = ${a.changeid})`,
  ]),
  many('workers/n:workerid/builds', (a) => [sql`a.workerid = ${a.workerid}`], {
    countScope: (a) => ({ workerid: sql`${String(a.workerid)}::text` }),
  }),
];
