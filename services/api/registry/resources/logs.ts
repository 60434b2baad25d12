import { sql } from '../../../core/db/pool.js';
import { log as logEntity } from '../../../core/entities/log.js';
import { type Endpoint, entityResource, type PathArgs, type Resource } from '../model.js';
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
  'builders/i:buildername/builds/n:build_number/steps/i:step_name/logs/i:log_slug',
  'builders/i:buildername/builds/n:build_number/steps/n:step_number/logs/i:log_slug',
];

/** The parts of logs and steps a path by log id or step id reads (Endpoint.parts). */
function logParts(pattern: string): Endpoint['parts'] | undefined {
  if (pattern.startsWith('logs/n:logid')) return (a) => ({ logs: `logs/id=${a.logid}` });
  if (pattern.startsWith('steps/n:stepid/')) return (a) => ({ logs: `logs/stepid=${a.stepid}` });
  return undefined;
}

const one = (pattern: string): Endpoint => {
  const parts = logParts(pattern);
  return {
    pattern,
    resource: log,
    collection: false,
    kind: 'rows',
    scope: logScope,
    ...(parts ? { parts } : {}),
  };
};
const many = (pattern: string): Endpoint => ({
  pattern,
  resource: log,
  collection: true,
  kind: 'rows',
  scope: (a) => [sql`a.stepid = ${stepIdOf(a)}`],
  // The step's row is read only to know it exists (the parent).
  ...(pattern.startsWith('steps/n:stepid/')
    ? { parts: (a: PathArgs) => ({ logs: `logs/stepid=${a.stepid}`, steps: `steps/id=${a.stepid}` }) }
    : {}),
});

export const logEndpoints: Endpoint[] = [
  one('logs/n:logid'),
  ...LOG_PREFIXES.map(one),
  ...LOG_PREFIXES.map((p) => many(p.replace(/\/logs\/i:log_slug$/, '/logs'))),
];
