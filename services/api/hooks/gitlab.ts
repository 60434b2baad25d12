// The GitLab change hook: push and tag push events become one change per distinct commit,
// merge requests and notes on them one change of the request's last commit.
//
// Buildbot facts (buildbot/www/hooks/gitlab.py GitLabHandler, 3.7):
// - with a secret, the X-Gitlab-Token header must be it ("Invalid secret" otherwise);
// - the body is JSON; the event is the payload's object_kind, else the X-Gitlab-Event header:
//   `push`, `tag_push` and `Push Hook` are pushes, `merge_request` and `note` as below, any
//   other event makes no change; the codebase is the request's `codebase` query argument;
// - a push of a ref neither refs/heads/<branch> nor refs/tags/<tag>, or of a deleted branch,
//   makes no change; a commit with `distinct` false is skipped; each other commit: author
//   "name <email>", files added then modified then removed, comments the message, revision
//   the id, when the timestamp, branch the ref's name, revlink the commit's url, repository
//   the repository's url, project the repository's name, category and property `event` the
//   event;
// - a merge request whose state is closed, merged or approved, or whose action is not open,
//   reopen, or an update that added code (`oldrev` present), makes no change; otherwise one:
//   author the last commit's, no files, comments "MR#<iid>: <title>\n\n<description>",
//   revision the last commit's id, when its timestamp, branch the target branch, repository
//   the target's git_http_url, project the target's name, category `merge_request`, revlink
//   the request's url, properties source_/target_ branch, project_id, repository (http URL)
//   and git_ssh_url, and event;
// - a note on a merge request is a change like the merge request's (whatever its state), its
//   text in the property `comments`; a note on anything else makes none.
// Where we differ: a wrong or missing token is 403 (Buildbot: 400), compared in constant time;
// a body that is not application/json is 415 (Buildbot reads any body as JSON); a payload
// without the fields an event has is 400 naming the field (Buildbot: 500).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { NewChange } from '../../core/data/index.js';
import { hookInvalid, hookSignature } from '../errors/catalogue.js';
import { JSON_TYPE, mediaType, parseJson, queryFields, text, unsupportedType } from './body.js';
import { field, fileList, type Headers, header, isObject, type Json, seconds } from './payload.js';

export interface GitlabOptions {
  /** The secret token; null: not checked. */
  secret: string | null;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Throws 403 unless X-Gitlab-Token is the secret. */
function verifyToken(secret: string, headers: Headers): void {
  const given = header(headers, 'x-gitlab-token');
  if (given === undefined || !timingSafeEqual(digest(given), digest(secret)))
    throw hookSignature('Invalid secret');
}

type Codebase = { codebase?: string };

function pushChanges(payload: Json, event: string, codebase: Codebase): NewChange[] {
  const ref = field(payload, 'ref');
  const project = field(payload, 'repository.name');
  const repository = field(payload, 'repository.url');
  const m = /^refs\/(heads|tags)\/(.+)$/s.exec(ref);
  if (!m || payload.deleted) return [];
  const commits = payload.commits;
  if (!Array.isArray(commits)) throw hookInvalid('malformed push payload: commits is not a list');
  return commits.flatMap((commit, i): NewChange[] => {
    if (!isObject(commit)) throw hookInvalid(`malformed push payload: commits[${i}] is not an object`);
    if (commit.distinct === false) return [];
    const at = (p: string) => field(commit, p, `commits[${i}].`);
    return [
      {
        author: `${at('author.name')} <${at('author.email')}>`,
        files: fileList(commit, i),
        comments: at('message'),
        revision: at('id'),
        when_timestamp: seconds(commit, 'timestamp', `commits[${i}].`),
        branch: m[2]!,
        revlink: at('url'),
        repository,
        project,
        category: event,
        properties: { event },
        ...codebase,
        src: 'git',
      },
    ];
  });
}

/** The change of a merge request (`mr`: its attributes, or the note's merge_request). */
function mergeRequestChange(
  mr: Json,
  where: string,
  event: string,
  extra: Json,
  codebase: Codebase,
): NewChange {
  const s = (p: string) => field(mr, p, where, event);
  const side = (p: 'source' | 'target') => ({
    [`${p}_branch`]: s(`${p}_branch`),
    [`${p}_project_id`]: mr[`${p}_project_id`],
    [`${p}_repository`]: s(`${p}.git_http_url`),
    [`${p}_git_ssh_url`]: s(`${p}.git_ssh_url`),
  });
  const description = typeof mr.description === 'string' ? mr.description : 'None';
  return {
    author: `${s('last_commit.author.name')} <${s('last_commit.author.email')}>`,
    files: [],
    comments: `MR#${String(mr.iid)}: ${s('title')}\n\n${description}`,
    revision: s('last_commit.id'),
    when_timestamp: seconds(mr, 'last_commit.timestamp', where, event),
    branch: s('target_branch'),
    repository: s('target.git_http_url'),
    project: s('target.name'),
    category: event,
    revlink: s('url'),
    properties: { ...side('source'), ...side('target'), event, ...extra },
    ...codebase,
    src: 'git',
  };
}

function mergeRequestChanges(payload: Json, event: string, codebase: Codebase): NewChange[] {
  const attrs = payload.object_attributes;
  if (!isObject(attrs)) throw hookInvalid(`malformed ${event} payload: object_attributes is not an object`);
  if (/^(closed|merged|approved)$/.test(String(attrs.state))) return [];
  const action = String(attrs.action);
  if (!/^(open|reopen)$/.test(action) && !(action === 'update' && 'oldrev' in attrs)) return [];
  return [mergeRequestChange(attrs, 'object_attributes.', event, {}, codebase)];
}

function noteChanges(payload: Json, event: string, codebase: Codebase): NewChange[] {
  const mr = payload.merge_request;
  if (mr === undefined) return [];
  if (!isObject(mr)) throw hookInvalid(`malformed ${event} payload: merge_request is not an object`);
  const note = field(payload, 'object_attributes.note', '', event);
  return [mergeRequestChange(mr, 'merge_request.', event, { comments: note }, codebase)];
}

const PUSHES = new Set(['push', 'tag_push', 'Push Hook']);

/** The changes a GitLab delivery makes (none for an event that is not one of the above). */
export function gitlabChanges(
  body: Buffer,
  url: string,
  headers: Headers,
  options: GitlabOptions,
): NewChange[] {
  if (options.secret !== null) verifyToken(options.secret, headers);
  const type = header(headers, 'content-type');
  if (mediaType(type) !== JSON_TYPE) throw unsupportedType(type);
  const payload = parseJson(text(body), 'the payload');
  if (!isObject(payload)) throw hookInvalid('the payload is not a JSON object');
  const kind = payload.object_kind;
  const event = typeof kind === 'string' ? kind : header(headers, 'x-gitlab-event');
  const given = queryFields(url).get('codebase');
  const codebase = given !== undefined ? { codebase: given } : {};
  if (event !== undefined && PUSHES.has(event)) return pushChanges(payload, event, codebase);
  if (event === 'merge_request') return mergeRequestChanges(payload, event, codebase);
  if (event === 'note') return noteChanges(payload, event, codebase);
  return [];
}
