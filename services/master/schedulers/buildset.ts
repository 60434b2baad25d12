// How a scheduler turns changes (or nothing) into a build set, after Buildbot's
// BaseScheduler (buildbot/schedulers/base.py addBuildsetForChanges,
// addBuildsetForSourceStampsWithDefaults, addBuildsetForSourceStamps):
// - one source stamp per configured codebase: for a codebase with changes, the stamp of its
//   newest change; for one without, a stamp of the codebase's configured repository and
//   branch, no revision, project '' (codebases in name order when changes are given, in
//   configuration order otherwise);
// - properties: those the caller gives (a trigger step's), then the scheduler's own (source
//   'Scheduler'), `scheduler` = its name, then the properties of the changes those stamps
//   carry (source 'Change'), a later one winning;
// - one build request per configured builder that exists, at the scheduler's priority.
// Where we differ: a change never overrides what the scheduler sets (`scheduler`, the
// scheduler's configured properties) nor `owner`. Buildbot lets the changes win, and a
// change comes from whoever can post to a hook: in the review (issue 28) an unauthenticated
// POST /change_hook/base renamed the scheduler and made a stranger the build's `owner`,
// which the `owner` role matcher trusts to grant control of the build. The change keeps
// its other properties (users rely on them); the dropped ones are logged.
import type { SchedulerConfig } from '../../core/config/master-config.js';
import {
  type AddedBuildset,
  addBuildset,
  changeStamps,
  findBuilderId,
  type SourceStampSpec,
  stampChangeProperties,
  type Tx,
} from '../../core/data/index.js';
import type { Logger } from '../../core/telemetry/logger.js';

type Codebases = Record<string, { repository: string; branch: string | null }>;

export const DEFAULT_CODEBASES: Codebases = { '': { repository: '', branch: null } };

export function codebasesOf(s: SchedulerConfig): Codebases {
  return s.codebases ?? DEFAULT_CODEBASES;
}

/** The stamp a scheduler's codebase gives when nothing else names one (no revision). */
export function defaultStamp(codebases: Codebases, codebase: string): SourceStampSpec {
  const cb = codebases[codebase];
  return {
    codebase,
    repository: cb?.repository ?? '',
    branch: cb?.branch ?? null,
    revision: null,
    project: '',
  };
}

export async function addBuildsetForChanges(
  tx: Tx,
  s: SchedulerConfig,
  reason: string,
  changeids: readonly number[],
  log: Logger,
): Promise<AddedBuildset> {
  const newest = new Map<string, number>();
  for (const c of await changeStamps(tx.q, changeids)) newest.set(c.codebase, c.sourcestampid);
  const codebases = codebasesOf(s);
  const stamps = Object.keys(codebases)
    .sort()
    .map((cb) => newest.get(cb) ?? defaultStamp(codebases, cb));
  return addBuildsetForSourceStamps(tx, s, reason, stamps, log);
}

/** A build set of each codebase's configured stamp (a timed scheduler with no changes). */
export function addBuildsetWithDefaults(
  tx: Tx,
  s: SchedulerConfig,
  reason: string,
  log: Logger,
): Promise<AddedBuildset> {
  const codebases = codebasesOf(s);
  return addBuildsetForSourceStamps(
    tx,
    s,
    reason,
    Object.keys(codebases).map((cb) => defaultStamp(codebases, cb)),
    log,
  );
}

/** What a caller adds to a scheduler's build set (a trigger step: its properties and parent). */
export interface BuildsetExtras {
  /** Given first: the scheduler's own properties, then those of the changes, override them (bar `owner`). */
  properties?: Record<string, readonly [unknown, string]>;
  waited_for?: boolean;
  parent_buildid?: number;
  parent_relationship?: string;
  external_idstring?: string;
  /** The builders to build, instead of all the scheduler's (a try job's, already checked to be among them). */
  builders?: readonly string[];
}

export async function addBuildsetForSourceStamps(
  tx: Tx,
  s: SchedulerConfig,
  reason: string,
  sourcestamps: (number | SourceStampSpec)[],
  log: Logger,
  extras: BuildsetExtras = {},
): Promise<AddedBuildset> {
  const properties: Record<string, readonly [unknown, string]> = { ...extras.properties };
  for (const [k, v] of Object.entries(s.properties)) properties[k] = [v, 'Scheduler'];
  properties.scheduler = [s.name, 'Scheduler'];
  const notFromChanges = new Set(['scheduler', 'owner', ...Object.keys(s.properties)]);
  const dropped = new Set<string>();
  const ssids = sourcestamps.filter((ss): ss is number => typeof ss === 'number');
  for (const [name, stored] of await stampChangeProperties(tx.q, ssids)) {
    if (notFromChanges.has(name)) {
      dropped.add(name);
      continue;
    }
    const pair = Array.isArray(stored) && stored.length === 2 ? stored : [stored, 'Change'];
    properties[name] = [pair[0], String(pair[1])];
  }
  if (dropped.size)
    log.warn(
      { scheduler: s.name, properties: [...dropped].sort(), sourcestampids: ssids },
      "a change's properties were dropped: the scheduler sets them, a change cannot",
    );
  const builderids: number[] = [];
  for (const name of extras.builders ?? s.builders) {
    const id = await findBuilderId(tx, name, false);
    if (id !== null) builderids.push(id);
  }
  // Buildbot walks the builders in id order.
  builderids.sort((a, b) => a - b);
  return addBuildset(tx, {
    scheduler: s.name,
    sourcestamps,
    reason,
    properties,
    builderids,
    priority: s.priority,
    ...(extras.waited_for !== undefined ? { waited_for: extras.waited_for } : {}),
    ...(extras.parent_buildid !== undefined ? { parent_buildid: extras.parent_buildid } : {}),
    ...(extras.parent_relationship !== undefined ? { parent_relationship: extras.parent_relationship } : {}),
    ...(extras.external_idstring !== undefined ? { external_idstring: extras.external_idstring } : {}),
  });
}
