// Buildbot's PBChangeSource (buildbot/changes/pb.py, ChangePerspective) as accounts of the PB
// port (./accounts.ts): each `change_sources` entry of type pb is a username and password on
// the workers' PB port of every master; the perspective a login gets has `addChange`, which
// `buildbot sendchange` calls with one dict (buildbot/clients/sendchange.py) and then hangs
// up. The dict is read as Buildbot's perspective_addChange reads it: `who` is the author,
// `when` the timestamp, `src` the version-control system, empty revlink/repository/project
// are '', files outside `prefix` are dropped and the prefix cut from the others, `links` is
// ignored; every field sendchange carries is kept (who, files, comments, branch, revision,
// category, repository, project, codebase, properties, when, revlink, vc). The change is
// added in one transaction, then the schedulers hear of it as of any change. A dict that is
// not one, or a field of the wrong type or too long, is answered with a failure the client
// prints, and one master log line.
import type { PbChangeSourceConfig } from '../../../core/config/master-config.js';
import type { NewChange } from '../../../core/data/index.js';
import type { Logger } from '../../../core/telemetry/logger.js';
import type { PbAccounts } from './accounts.js';
import { LocalObject } from './broker.js';
import { type JellyValue, RemoteFailure, valueError } from './jelly.js';
import { fromJelly } from './values.js';

const failure = valueError;

const optText = (d: Record<string, unknown>, key: string): string | null => {
  const v = d[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw failure(`${key} is not text`);
  return v;
};

/** sendchange's dict as the change Buildbot's perspective_addChange would add. */
export function changeOf(arg: JellyValue | undefined, prefix: string | undefined): NewChange {
  const d = arg === undefined ? undefined : fromJelly(arg);
  if (typeof d !== 'object' || d === null || Array.isArray(d))
    throw failure('the change is not a dictionary');
  const c = d as Record<string, unknown>;
  const files = c.files ?? [];
  if (!Array.isArray(files) || !files.every((f) => typeof f === 'string'))
    throw failure('files is not a list of names');
  const kept = prefix ? files.filter((f) => f.startsWith(prefix)).map((f) => f.slice(prefix.length)) : files;
  const when = c.when;
  if (when !== undefined && when !== null && typeof when !== 'number') throw failure('when is not a number');
  const properties = c.properties ?? {};
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties))
    throw failure('properties is not a dictionary');
  return {
    author: optText(c, 'who') ?? optText(c, 'author') ?? '',
    committer: optText(c, 'committer') || null,
    files: kept,
    comments: optText(c, 'comments') ?? '',
    revision: optText(c, 'revision'),
    when_timestamp: (when as number | null | undefined) ?? null,
    branch: optText(c, 'branch'),
    category: optText(c, 'category'),
    revlink: optText(c, 'revlink') ?? '',
    properties: properties as Record<string, unknown>,
    repository: optText(c, 'repository') ?? '',
    codebase: optText(c, 'codebase') ?? '',
    project: optText(c, 'project') ?? '',
    src: optText(c, 'src'),
  };
}

/** Register each pb change source's user on the PB port's accounts. */
export function registerPbChangeSources(
  accounts: PbAccounts,
  sources: readonly PbChangeSourceConfig[],
  addChange: ((c: NewChange) => Promise<number>) | undefined,
  log: Logger,
): () => void {
  if (!addChange) return () => {};
  const removers = sources.map((s) =>
    accounts.add(s.user, {
      kind: 'change source',
      password: () => s.passwd,
      attach: (user, _mind, session) =>
        new LocalObject('ChangePerspective', {
          addChange: async ([arg]) => {
            const at = { changesource: s.name, user, peer: session.peer };
            try {
              const changeid = await addChange(changeOf(arg, s.prefix));
              log.info({ ...at, changeid }, 'change added');
              // Buildbot answers None, so that no client depends on the change's id.
              return null;
            } catch (err) {
              const message = (err as Error).message;
              log.warn({ ...at, err: message }, 'change refused');
              throw err instanceof RemoteFailure ? err : failure(message);
            }
          },
        }),
    }),
  );
  return () => {
    for (const remove of removers) remove();
  };
}
