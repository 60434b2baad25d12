import { sql } from '../../../core/db/pool.js';
import { type Endpoint, field, type PathArgs, type Resource } from '../model.js';
import { t } from '../types.js';
import { buildIdOf } from './builds.js';

export const step: Resource = {
  name: 'step',
  plural: 'steps',
  key: 'stepid',
  from: sql`steps a`,
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

/** The step named in a path: by id, or within a build by name or number. */
export function stepIdOf(args: PathArgs) {
  if (args.stepid !== undefined) return sql`${args.stepid}::int`;
  const within = sql`st.buildid = ${buildIdOf(args)}`;
  return args.step_name !== undefined
    ? sql`(SELECT st.id FROM steps st WHERE ${within} AND st.name = ${args.step_name})`
    : sql`(SELECT st.id FROM steps st WHERE ${within} AND st.number = ${args.step_number})`;
}

const stepScope = (a: PathArgs) =>
  a.step_name !== undefined
    ? [sql`a.buildid = ${buildIdOf(a)}`, sql`a.name = ${a.step_name}`]
    : [sql`a.buildid = ${buildIdOf(a)}`, sql`a.number = ${a.step_number}`];

const one = (pattern: string, scope: Endpoint['scope'], noGet = false): Endpoint => ({
  pattern,
  resource: step,
  collection: false,
  kind: 'rows',
  scope,
  ...(noGet ? { noGet } : {}),
});
const many = (pattern: string): Endpoint => ({
  pattern,
  resource: step,
  collection: true,
  kind: 'rows',
  scope: (a) => [sql`a.buildid = ${buildIdOf(a)}`],
});

export const stepEndpoints: Endpoint[] = [
  // The contract gives /steps/{stepid} no GET; it is the parent of /steps/{stepid}/logs.
  one('steps/n:stepid', (a) => [sql`a.id = ${a.stepid}`], true),
  one('builds/n:buildid/steps/i:step_name', stepScope),
  one('builds/n:buildid/steps/n:step_number', stepScope),
  one('builders/n:builderid/builds/n:build_number/steps/i:step_name', stepScope),
  one('builders/n:builderid/builds/n:build_number/steps/n:step_number', stepScope),
  one('builders/i:buildername/builds/n:build_number/steps/i:step_name', stepScope),
  one('builders/i:buildername/builds/n:build_number/steps/n:step_number', stepScope),
  many('builds/n:buildid/steps'),
  many('builders/n:builderid/builds/n:build_number/steps'),
  many('builders/i:buildername/builds/n:build_number/steps'),
];
