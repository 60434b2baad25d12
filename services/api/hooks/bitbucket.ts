// The Bitbucket change hook (Buildbot's `bitbucket` dialect): Bitbucket's POST service sends a
// form whose `payload` field is JSON; each commit in it becomes a change.
//
// Buildbot facts (buildbot/www/hooks/bitbucket.py BitBucketHandler, 3.7): the repository is
// canon_url followed by the repository's absolute_url; the project is the request's `project`
// argument (default empty); each commit: author raw_author, files the `file` of each of its
// files, comments the message, revision raw_node, when utctimestamp, branch the commit's
// branch, revlink <repository>commits/<raw_node>, property `event` the X-Event-Key header
// (None without it); src the repository's scm (git or hg). The dialect checks no secret.
// Where we differ: a request without a payload, or a payload without the fields a commit has,
// is 400 naming what is missing (Buildbot: 500).
import type { NewChange } from '../../core/data/index.js';
import { hookInvalid } from '../errors/catalogue.js';
import { parseJson } from './body.js';
import { field, type Headers, header, isObject, seconds } from './payload.js';

/** The changes of a Bitbucket POST: `fields` are the request's (query and form). */
export function bitbucketChanges(fields: Map<string, unknown>, headers: Headers): NewChange[] {
  const raw = fields.get('payload');
  if (typeof raw !== 'string') throw hookInvalid('the request has no payload field');
  const payload = parseJson(raw, 'the payload');
  if (!isObject(payload)) throw hookInvalid('the payload is not a JSON object');
  const repository = `${field(payload, 'canon_url')}${field(payload, 'repository.absolute_url')}`;
  const scm = field(payload, 'repository.scm');
  const project = fields.get('project');
  const event = header(headers, 'x-event-key') ?? null;
  const commits = payload.commits;
  if (!Array.isArray(commits)) throw hookInvalid('malformed push payload: commits is not a list');
  return commits.map((commit, i): NewChange => {
    if (!isObject(commit)) throw hookInvalid(`malformed push payload: commits[${i}] is not an object`);
    const at = (p: string) => field(commit, p, `commits[${i}].`);
    const files = commit.files;
    if (!Array.isArray(files) || !files.every((f) => isObject(f) && typeof f.file === 'string'))
      throw hookInvalid(`malformed push payload: commits[${i}].files is not a list of {file}`);
    const revision = at('raw_node');
    return {
      author: at('raw_author'),
      files: files.map((f) => f.file as string),
      comments: at('message'),
      revision,
      when_timestamp: seconds(commit, 'utctimestamp', `commits[${i}].`),
      branch: at('branch'),
      revlink: `${repository}commits/${revision}`,
      repository,
      project: typeof project === 'string' ? project : '',
      properties: { event },
      src: scm,
    };
  });
}
