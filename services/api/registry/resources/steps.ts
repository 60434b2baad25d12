import { sql } from '../../../core/db/pool.js';
import { step as stepEntity } from '../../../core/entities/step.js';
import { type Endpoint, entityResource, type PathArgs, type Resource } from '../model.js';
import { buildIdOf } from './builds.js';

export const step: Resource = entityResource(stepEntity);

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

/**
 * Steps of a build named by builder and number: the build's own part of steps, and of builds
 * (read to find its id, and that it exists), once a row names the build; an empty page of
 * steps names none, and counts both tables whole. A build keeps its builder and number.
 */
const byNumberParts: Endpoint['rowParts'] = (_a, value) => {
  const id = value('buildid');
  return typeof id === 'number' ? { steps: { buildid: id }, builds: { id } } : null;
};

const one = (pattern: string, scope: Endpoint['scope'], noGet = false): Endpoint => ({
  pattern,
  resource: step,
  collection: false,
  kind: 'rows',
  scope,
  ...(noGet ? { noGet } : {}),
  ...(pattern.startsWith('builds/n:buildid/')
    ? { parts: (a: PathArgs) => ({ steps: { buildid: a.buildid } }) }
    : {}),
  ...(pattern.startsWith('builders/') ? { rowParts: byNumberParts } : {}),
});
const many = (pattern: string): Endpoint => ({
  pattern,
  resource: step,
  collection: true,
  kind: 'rows',
  scope: (a) => [sql`a.buildid = ${buildIdOf(a)}`],
  // By id, the build's row is read only to know it exists (the parent).
  ...(pattern.startsWith('builds/n:buildid/')
    ? { parts: (a: PathArgs) => ({ steps: { buildid: a.buildid }, builds: { id: a.buildid } }) }
    : {}),
  ...(pattern.startsWith('builders/') ? { rowParts: byNumberParts } : {}),
});

export const stepEndpoints: Endpoint[] = [
  // The contract gives /steps/{stepid} no GET; it is the parent of /steps/{stepid}/logs.
  one('steps/n:stepid', (a) => [sql`a.id = ${a.stepid}`], true),
  one('builds/n:buildid/steps/i:step_name', stepScope),
  one('builds/n:buildid/steps/n:step_number', stepScope),
  one('builders/n:builderid/builds/n:build_number/steps/i:step_name', stepScope),
  one('builders/n:builderid/builds/n:build_number/steps/n:step_number', stepScope),
  one('builders/s:buildername/builds/n:build_number/steps/i:step_name', stepScope),
  one('builders/s:buildername/builds/n:build_number/steps/n:step_number', stepScope),
  many('builds/n:buildid/steps'),
  many('builders/n:builderid/builds/n:build_number/steps'),
  many('builders/s:buildername/builds/n:build_number/steps'),
];
