// Buildbot's Try_Userpass (buildbot/schedulers/trysched.py, Try_Userpass_Perspective) as
// accounts of the PB port (./accounts.ts): each [user, password] of a `try_userpass`
// scheduler logs in on the workers' PB port of every master, and its perspective has
// `try(branch, revision, (level, diff), repository, project, builderNames, who, comment,
// properties)`, which `buildbot try --connect=pb` calls (buildbot/clients/tryclient.py,
// deliver_job_pb), and `getAvailableBuilderNames` (`buildbot try --get-builder-names`). A
// try is read as perspective_try reads it: the builders filtered as TryBase does (one not
// the scheduler's: nothing built, None answered), reason "'try' job" (" by user WHO",
// " (COMMENT)"), the patch on a source stamp of codebase ''; the build set is added as a
// Try_Jobdir's is (../../schedulers/try-buildset.ts). The answer is the build set's status
// object (./try-status.ts), which `buildbot try --wait` follows. A bad argument is answered
// with a failure the client prints, and one master log line.
import type { SchedulerConfig } from '../../../core/config/master-config.js';
import { BUILDSET_COLUMN_SIZES, SOURCESTAMP_COLUMN_SIZES } from '../../../core/data/column-sizes.js';
import type { Logger } from '../../../core/telemetry/logger.js';
import { tryBuilders } from '../../schedulers/try-buildset.js';
import { MAX_TRY_JOB_BYTES, type TryJob } from '../../schedulers/try-job.js';
import type { TryRequests } from '../connection.js';
import type { PbAccounts } from './accounts.js';
import { LocalObject } from './broker.js';
import { type JellyValue, RemoteFailure, Tuple, valueError } from './jelly.js';
import { buildsetStatus } from './try-status.js';
import { fromJelly } from './values.js';

const SS = SOURCESTAMP_COLUMN_SIZES;

type TryUserpassConfig = Extract<SchedulerConfig, { type: 'try_userpass' }>;

const failure = valueError;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A text argument (str, bytes as UTF-8, or None), at most `max` characters (the column's). */
function text(v: JellyValue | undefined, what: string, max: number): string | null {
  if (v === undefined || v === null) return null;
  let s: string;
  try {
    s = v instanceof Uint8Array ? utf8.decode(v) : (v as string);
  } catch {
    throw failure(`${what} is not UTF-8 text`);
  }
  if (typeof s !== 'string') throw failure(`${what} is not text`);
  if ([...s].length > max) throw failure(`${what} is longer than ${max} characters`);
  return s;
}

/** perspective_try's arguments as a try job (no jobid: Buildbot gives a userpass try none). */
export function tryJobOf(args: JellyValue[]): Omit<TryJob, 'jobid'> {
  const [branch, revision, patch, repository, project, builderNames, who, comment, properties] = args;
  const p = patch instanceof Tuple ? patch.items : Array.isArray(patch) ? patch : undefined;
  const level = p?.[0];
  if (p?.length !== 2 || typeof level !== 'number' || !Number.isInteger(level) || level < 0)
    throw failure('the patch is not (level, diff)');
  const body = text(p[1], 'the patch', MAX_TRY_JOB_BYTES) ?? '';
  if (Buffer.byteLength(body) > MAX_TRY_JOB_BYTES)
    throw failure(`the patch is over ${MAX_TRY_JOB_BYTES} bytes`);
  const names = builderNames === undefined || builderNames === null ? [] : fromJelly(builderNames);
  if (!Array.isArray(names) || !names.every((n) => typeof n === 'string'))
    throw failure('builderNames is not a list of names');
  const props = properties === undefined || properties === null ? {} : fromJelly(properties);
  if (typeof props !== 'object' || props === null || Array.isArray(props))
    throw failure('properties is not a dictionary');
  return {
    branch: text(branch, 'branch', SS.branch),
    baserev: text(revision, 'revision', SS.revision),
    patchLevel: level,
    patchBody: body,
    repository: text(repository, 'repository', SS.repository) ?? '',
    project: text(project, 'project', SS.project) ?? '',
    who: text(who, 'who', 255) ?? '',
    comment: text(comment, 'comment', 4096) ?? '',
    builderNames: names as string[],
    properties: props as Record<string, unknown>,
  };
}

/** Buildbot's reason for a userpass try, cut to the column's 256 characters. */
export function tryReason(job: Pick<TryJob, 'who' | 'comment'>): string {
  let reason = "'try' job";
  if (job.who) reason += ` by user ${job.who}`;
  if (job.comment) reason += ` (${job.comment})`;
  return [...reason].slice(0, BUILDSET_COLUMN_SIZES.reason).join('');
}

/** Register each try_userpass scheduler's users on the PB port's accounts. */
export function registerTryUsers(
  accounts: PbAccounts,
  schedulers: readonly TryUserpassConfig[],
  requests: TryRequests | undefined,
  log: Logger,
): () => void {
  if (!requests) return () => {};
  const removers = schedulers.flatMap((s) =>
    s.userpass.map(([name, password]) =>
      accounts.add(name, {
        kind: 'try',
        password: () => password,
        attach: (user, _mind, session) =>
          new LocalObject('Try_Userpass_Perspective', {
            getAvailableBuilderNames: () => [...s.builders],
            try: async (args) => {
              const at = { scheduler: s.name, user, peer: session.peer };
              try {
                const job = tryJobOf(args);
                const builders = tryBuilders(s, job.builderNames);
                if (builders.length === 0) {
                  log.warn(
                    { ...at, builders: job.builderNames },
                    'try refused: a builder is not the scheduler’s',
                  );
                  return null;
                }
                const added = await requests.add(s, job, builders, tryReason(job));
                if (!added) {
                  log.warn(at, 'try refused: the scheduler is disabled');
                  return null;
                }
                log.info({ ...at, bsid: added.bsid, builders }, 'try accepted');
                return buildsetStatus(added, requests, session);
              } catch (err) {
                const message = (err as Error).message;
                log.warn({ ...at, err: message }, 'try refused');
                throw err instanceof RemoteFailure ? err : failure(message);
              }
            },
          }),
      }),
    ),
  );
  return () => {
    for (const remove of removers) remove();
  };
}
