// What a try scheduler (Buildbot's TryBase: Try_Jobdir here, Try_Userpass) makes of a try
// request, as buildbot/schedulers/trysched.py does: the builders it names must all be among
// the scheduler's (else nothing is built; none named: all of them), one source stamp of
// codebase '' with the patch (level, body, author = who, comment; no subdir: Buildbot has no
// way to send one), reason "'try' job" (and " by user WHO"), the job's properties with
// source "try build".
import type { SchedulerConfig } from '../../core/config/master-config.js';
import {
  BUILDSET_COLUMN_SIZES,
  PROPERTY_NAME_SIZE,
  SOURCESTAMP_COLUMN_SIZES,
} from '../../core/data/column-sizes.js';
import type { AddedBuildset, Tx } from '../../core/data/index.js';
import { codePoints } from '../../core/identifiers.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { addBuildsetForSourceStamps } from './buildset.js';
import type { TryJob } from './try-job.js';

/** Buildbot's filterBuilderList: the builders to build, or [] when one named is not the scheduler's. */
export function tryBuilders(s: SchedulerConfig, named: readonly string[]): string[] {
  if (named.length === 0) return [...s.builders];
  return named.every((b) => s.builders.includes(b)) ? [...named] : [];
}

/**
 * Why a try request cannot be stored: the first of its fields longer than the column it is
 * written to, named as the job names it; null when all fit. Without this a long field failed
 * the build set's transaction in PostgreSQL, naming no field. `who` is written in the reason.
 */
export function tryFieldTooLong(
  job: Omit<TryJob, 'jobid'> & { jobid?: string },
  reason: string,
): string | null {
  const ss = SOURCESTAMP_COLUMN_SIZES;
  const fields: [string, string | null | undefined, number][] = [
    ['jobid', job.jobid, BUILDSET_COLUMN_SIZES.external_idstring],
    ['branch', job.branch, ss.branch],
    ['baserev', job.baserev, ss.revision],
    ['repository', job.repository, ss.repository],
    ['project', job.project, ss.project],
    ['who', reason, BUILDSET_COLUMN_SIZES.reason],
    ...Object.keys(job.properties).map((k): [string, string, number] => [
      `the property name ${JSON.stringify(k.slice(0, 40))}`,
      k,
      PROPERTY_NAME_SIZE,
    ]),
  ];
  for (const [name, value, max] of fields) {
    if (typeof value !== 'string' || codePoints(value) <= max) continue;
    return name === 'who'
      ? `who makes the reason longer than its column's ${max} characters`
      : `${name} is longer than its column's ${max} characters`;
  }
  return null;
}

/** The build set of a try request whose builders tryBuilders allowed. */
export function addTryBuildset(
  tx: Tx,
  s: SchedulerConfig,
  job: Omit<TryJob, 'jobid'> & { jobid?: string },
  builders: readonly string[],
  reason: string,
  log: Logger,
): Promise<AddedBuildset> {
  const properties = Object.fromEntries(
    Object.entries(job.properties).map(([k, v]) => [k, [v, 'try build'] as const]),
  );
  return addBuildsetForSourceStamps(
    tx,
    s,
    reason,
    [
      {
        codebase: '',
        branch: job.branch,
        revision: job.baserev,
        repository: job.repository,
        project: job.project,
        patch_body: job.patchBody,
        patch_level: job.patchLevel,
        patch_author: job.who,
        patch_comment: job.comment,
        patch_subdir: '',
      },
    ],
    log,
    { properties, builders, ...(job.jobid !== undefined ? { external_idstring: job.jobid } : {}) },
  );
}
