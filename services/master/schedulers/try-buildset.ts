// What a try scheduler (Buildbot's TryBase: Try_Jobdir here, Try_Userpass) makes of a try
// request, as buildbot/schedulers/trysched.py does: the builders it names must all be among
// the scheduler's (else nothing is built; none named: all of them), one source stamp of
// codebase '' with the patch (level, body, author = who, comment; no subdir: Buildbot has no
// way to send one), reason "'try' job" (and " by user WHO"), the job's properties with
// source "try build".
import type { SchedulerConfig } from '../../core/config/master-config.js';
import type { AddedBuildset, Tx } from '../../core/data/index.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { addBuildsetForSourceStamps } from './buildset.js';
import type { TryJob } from './try-job.js';

/** Buildbot's filterBuilderList: the builders to build, or [] when one named is not the scheduler's. */
export function tryBuilders(s: SchedulerConfig, named: readonly string[]): string[] {
  if (named.length === 0) return [...s.builders];
  return named.every((b) => s.builders.includes(b)) ? [...named] : [];
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
