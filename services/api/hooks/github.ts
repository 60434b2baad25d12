// The GitHub change hook: push events become changes, one per commit.
//
// Buildbot facts (buildbot/www/hooks/github.py GitHubEventHandler):
// - with a secret, the X-Hub-Signature header (`sha1=<hex>`) must be the HMAC of the body,
//   compared in constant time; the body is JSON (application/json) or a form whose `payload`
//   field is JSON (application/x-www-form-urlencoded);
// - X-GitHub-Event picks the handler: `ping` and `workflow_run` make no change, `push` makes
//   changes, any other event is refused (400 "Unknown event: <name>");
// - a push of a ref that is neither refs/heads/<branch> nor refs/tags/<tag>, of a deleted
//   branch, or whose head commit message holds [skip ci] or [ci skip], makes no change; a
//   push that created the ref makes one change, of its head commit; otherwise one change per
//   commit: author and committer "name <email>", comments the message, revision the id, when
//   the commit's timestamp, branch the ref's name, files added then modified then removed,
//   revlink the commit's URL, repository the repository's html_url, project its full_name,
//   category null for a branch and 'tag' for a tag, properties github_distinct (the commit's
//   `distinct`, default true) and event 'push', the configured codebase, src 'git'.
// Where we differ: the newer X-Hub-Signature-256 (`sha256=<hex>`) is checked too, and wins
// when both come; with a secret, a missing or wrong signature is 403 (Buildbot: 400, and a
// missing one passes unless `strict`); another content type is 415 (Buildbot: 400); a
// payload without the fields a push has is 400 (Buildbot: 500). pull_request events are
// github-pull.ts's; `skips` and `github_property_whitelist` apply to both, as in Buildbot.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { NewChange } from '../../core/data/index.js';
import { hookInvalid, hookSignature } from '../errors/catalogue.js';
import { FORM, formFields, JSON_TYPE, mediaType, parseJson, text, unsupportedType } from './body.js';
import { whitelistedProperties } from './github-properties.js';
import { type PullOptions, pullRequestChanges } from './github-pull.js';
import { field, fileList, type Headers, header, isObject, type Json, seconds } from './payload.js';

export interface GithubOptions extends Omit<PullOptions, 'codebase'> {
  /** The webhook secret; null: signatures are not checked. */
  secret: string | null;
  codebase?: string | undefined;
}

/** Throws 403 unless the body carries a valid signature made with the secret. */
export function verifySignature(secret: string, body: Buffer, headers: Headers): void {
  const sha256 = header(headers, 'x-hub-signature-256');
  const signature = sha256 ?? header(headers, 'x-hub-signature');
  if (!signature) throw hookSignature('Request has no required signature');
  const m = /^(sha1|sha256)=([0-9a-fA-F]+)$/.exec(signature.trim());
  if (!m) throw hookSignature('Wrong signature format');
  const algorithm = m[1]!;
  if (sha256 !== undefined && algorithm !== 'sha256') throw hookSignature('Wrong signature format');
  const expected = createHmac(algorithm, secret).update(body).digest();
  // Exactly two hex digits a byte: Buffer.from(hex) would drop an odd last digit, and a
  // signature with something appended would pass.
  const hex = m[2]!;
  if (hex.length !== expected.length * 2 || !timingSafeEqual(Buffer.from(hex, 'hex'), expected))
    throw hookSignature('Hash mismatch');
}

async function payloadOf(body: Buffer, contentType: string | undefined): Promise<unknown> {
  const type = mediaType(contentType);
  if (type === JSON_TYPE) return parseJson(text(body), 'the payload');
  if (type === FORM) {
    const payload = (await formFields(body, contentType!)).get('payload');
    if (payload === undefined) throw hookInvalid('the form has no payload field');
    return parseJson(payload, 'the payload');
  }
  throw unsupportedType(contentType);
}

function pushChanges(payload: Json, options: GithubOptions): NewChange[] {
  const ref = field(payload, 'ref');
  const repository = field(payload, 'repository.html_url');
  const project = field(payload, 'repository.full_name');
  const m = /^refs\/(heads|tags)\/(.+)$/s.exec(ref);
  if (!m) return [];
  const branch = m[2]!;
  if (payload.deleted) return [];
  const head = payload.head_commit;
  const headMessage = isObject(head) && typeof head.message === 'string' ? head.message : '';
  if (options.skips.some((re) => re.test(headMessage))) return [];
  const commits = payload.created ? [head] : payload.commits;
  if (!Array.isArray(commits)) throw hookInvalid('malformed push payload: commits is not a list');
  return commits.map((commit, i): NewChange => {
    if (!isObject(commit)) throw hookInvalid(`malformed push payload: commits[${i}] is not an object`);
    const at = (p: string) => field(commit, p, `commits[${i}].`);
    return {
      author: `${at('author.name')} <${at('author.email')}>`,
      committer: `${at('committer.name')} <${at('committer.email')}>`,
      files: fileList(commit, i),
      comments: at('message'),
      revision: at('id'),
      when_timestamp: seconds(commit, 'timestamp', `commits[${i}].`),
      branch,
      revlink: at('url'),
      repository,
      project,
      properties: {
        github_distinct: commit.distinct ?? true,
        event: 'push',
        ...whitelistedProperties(payload, options.whitelist),
      },
      category: m[1] === 'tags' ? 'tag' : null,
      ...(options.codebase !== undefined ? { codebase: options.codebase } : {}),
      src: 'git',
    };
  });
}

/** The changes a GitHub delivery makes (none for a ping). */
export async function githubChanges(
  body: Buffer,
  headers: Headers,
  options: GithubOptions,
): Promise<NewChange[]> {
  if (options.secret !== null) verifySignature(options.secret, body, headers);
  const payload = await payloadOf(body, header(headers, 'content-type'));
  const event = header(headers, 'x-github-event');
  switch (event) {
    case 'ping':
    case 'workflow_run':
      return [];
    case 'push':
      if (!isObject(payload)) throw hookInvalid('malformed push payload: not an object');
      return pushChanges(payload, options);
    case 'pull_request':
      if (!isObject(payload)) throw hookInvalid('malformed pull_request payload: not an object');
      return pullRequestChanges(payload, options);
    default:
      throw hookInvalid(`Unknown event: ${event ?? 'None'}`);
  }
}
