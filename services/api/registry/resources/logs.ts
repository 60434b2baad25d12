import { sql } from '../../../core/db/pool.js';
import { log as logEntity } from '../../../core/entities/log.js';
import { type Endpoint, entityResource, type PathArgs, type Resource } from '../model.js';
import { buildIdOf } from './builds.js';
import { stepIdOf } from './steps.js';

export const log: Resource = entityResource(logEntity);

/** Conditions over alias `a` (a logs row) for the log a path names. */
export function logScope(a: PathArgs) {
  return a.logid !== undefined
    ? [sql`a.id = ${a.logid}`]
    : [sql`a.stepid = ${stepIdOf(a)}`, sql`a.slug = ${a.log_slug}`];
}

// Where a log is named: by id, or by slug within a step named by id, by build or by builder.
export const LOG_PREFIXES = [
  'steps/n:stepid/logs/i:log_slug',
  'builds/n:buildid/steps/i:step_name/logs/i:log_slug',
  'builds/n:buildid/steps/n:step_number/logs/i:log_slug',
  'builders/n:builderid/builds/n:build_number/steps/i:step_name/logs/i:log_slug',
  'builders/n:builderid/builds/n:build_number/steps/n:step_number/logs/i:log_slug',
  'builders/s:buildername/builds/n:build_number/steps/i:step_name/logs/i:log_slug',
  'builders/s:buildername/builds/n:build_number/steps/n:step_number/logs/i:log_slug',
];

/**
 * The build and step a path through a step resolves to (Endpoint.pathIds), read by the
 * page's statement beside the log rows: the log's row holds no build id, and a range of
 * lines has no row of its own. None for a path by log id, whose parts the path names.
 */
export function logPathIds(pattern: string): Endpoint['pathIds'] | undefined {
  if (pattern.startsWith('logs/n:logid')) return undefined;
  if (pattern.startsWith('steps/n:stepid/')) return (a) => sql`json_build_object('stepid', ${a.stepid}::int)`;
  return (a) => sql`json_build_object('buildid', ${buildIdOf(a)}, 'stepid', ${stepIdOf(a)})`;
}

/**
 * The parts a log or its lines named through its step reads, once the statement has found
 * them (Endpoint.rowParts): the build's row (only to find its id; a path by builder reads
 * it), the step's row, and the log's own row and chunks (or, for the step's list of logs,
 * the step's part of logs, which a new log in the step writes). Each is unique within its
 * parent (builds by builder and number, steps by build and name or number, logs by step and
 * slug), so another row takes the path's place only after this one is written. A path by
 * builder name also reads builders, which stays whole.
 */
export function logRowParts(list: boolean): Endpoint['rowParts'] {
  return (_a, value) => {
    const [build, step, log] = [value('buildid'), value('stepid'), list ? undefined : value('logid')];
    if (typeof step !== 'number') return null;
    return {
      ...(typeof build === 'number' ? { builds: { id: build } } : {}),
      steps: { id: step },
      ...(typeof log === 'number'
        ? { logs: { id: log }, logchunks: { logid: log } }
        : { logs: { stepid: step } }),
    };
  };
}

/** The parts of logs and steps a path by log id or step id reads (Endpoint.parts). */
function logParts(pattern: string): Endpoint['parts'] | undefined {
  if (pattern.startsWith('logs/n:logid')) return (a) => ({ logs: { id: a.logid } });
  if (pattern.startsWith('steps/n:stepid/')) return (a) => ({ logs: { stepid: a.stepid } });
  return undefined;
}

const one = (pattern: string): Endpoint => {
  const parts = logParts(pattern);
  const pathIds = logPathIds(pattern);
  return {
    pattern,
    resource: log,
    collection: false,
    kind: 'rows',
    scope: logScope,
    ...(parts ? { parts } : {}),
    ...(pathIds ? { pathIds, rowParts: logRowParts(false) } : {}),
  };
};
const many = (pattern: string): Endpoint => {
  const pathIds = logPathIds(pattern);
  return {
    pattern,
    resource: log,
    collection: true,
    kind: 'rows',
    scope: (a) => [sql`a.stepid = ${stepIdOf(a)}`],
    // The step's row is read only to know it exists (the parent).
    ...(pattern.startsWith('steps/n:stepid/')
      ? { parts: (a: PathArgs) => ({ logs: { stepid: a.stepid }, steps: { id: a.stepid } }) }
      : {}),
    ...(pathIds ? { pathIds, rowParts: logRowParts(true) } : {}),
  };
};

/**
 * Flotilla's own: every log of a build's steps in one read, each with its `stepid`. Buildbot
 * lists the logs of one step per read (`/steps/{stepid}/logs`, and no wildcard for the step in
 * its paths), so a build page made one read per step (17 requests for a build of 5 steps, and
 * Buildbot's own UI 53 for a build with 4 triggered builds, buildbot/buildbot#2997;
 * load/results/web-pages.md). Unlisted: /application.spec stays Buildbot's. Reads the build's
 * row (the parent) and its part of steps; logs count whole, a build's logs being many steps'
 * parts.
 */
const ofBuild: Endpoint = {
  pattern: 'builds/n:buildid/logs',
  resource: log,
  collection: true,
  kind: 'rows',
  scope: (a) => [sql`a.stepid IN (SELECT st.id FROM steps st WHERE st.buildid = ${a.buildid})`],
  parts: (a) => ({ builds: { id: a.buildid }, steps: { buildid: a.buildid } }),
  unlisted: true,
};

export const logEndpoints: Endpoint[] = [
  one('logs/n:logid'),
  ...LOG_PREFIXES.map(one),
  ...LOG_PREFIXES.map((p) => many(p.replace(/\/logs\/i:log_slug$/, '/logs'))),
  ofBuild,
];
