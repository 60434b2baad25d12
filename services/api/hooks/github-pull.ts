// The GitHub hook's pull_request event: a pull request opened, reopened or given new commits
// (`synchronize`) becomes one change of its head commit, on the ref GitHub keeps for it.
//
// Buildbot facts (buildbot/www/hooks/github.py handle_pull_request, 3.7): the head commit's
// message is read from GitHub's API (GET <api>/repos/<full_name>/commits/<sha>; "No message
// field" when that fails) and a message with a skip pattern makes no change; an action other
// than opened, reopened, synchronize makes none; the files are the first page of GET
// <api>/repos/<full_name>/pulls/<number>/files (none when that fails); both requests carry
// `User-Agent: Buildbot` and, with a token, `Authorization: token <token>`. The change:
// revision the head's sha, when the pull request's created_at, branch
// refs/pull/<number>/<pullrequest_ref> (default `merge`), revlink _links.html.href,
// repository the repository's html_url, project the base repository's full_name, category
// `pull`, author the sender's login, comments "GitHub Pull Request #<n> (<c> commit[s])\n
// <title>\n<body>" (a null body is Python's "None"), properties pullrequesturl, event
// `pull_request`, basename (the base ref) and the whitelisted fields of pull_request.
// Where we differ: the action is looked at before the message is asked for (the outcome is
// the same, with one request less for a closed pull request); GitHub's API that cannot be
// reached within 10 s counts as a failed request, and is logged.
import type { NewChange } from '../../core/data/index.js';
import { hookInvalid } from '../errors/catalogue.js';
import { whitelistedProperties } from './github-properties.js';
import { field, isObject, type Json, seconds, valueAt } from './payload.js';

export interface GithubApi {
  /** GitHub's API root (Buildbot's github_api_endpoint). */
  endpoint: string;
  /** The token of Buildbot's `token` option; null: none sent. */
  token: string | null;
}

export interface PullOptions {
  api: GithubApi;
  pullrequestRef: string;
  skips: readonly RegExp[];
  whitelist: readonly string[];
  codebase?: string | undefined;
  /** Where a failed request to the API is said. */
  warn(message: string, details: Record<string, unknown>): void;
}

const ACTIONS = new Set(['opened', 'reopened', 'synchronize']);
const API_TIMEOUT_MS = 10_000;

/** The JSON of a GET on GitHub's API; null when it fails (logged). */
async function apiGet(path: string, options: PullOptions): Promise<unknown> {
  const headers: Record<string, string> = { 'user-agent': 'Buildbot', accept: 'application/vnd.github+json' };
  if (options.api.token !== null) headers.authorization = `token ${options.api.token}`;
  const url = `${options.api.endpoint.replace(/\/+$/, '')}${path}`;
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(API_TIMEOUT_MS) });
    if (res.status >= 200 && res.status < 300) return await res.json();
    options.warn("GitHub's API refused a request of the pull_request hook", { path, status: res.status });
  } catch (err) {
    options.warn("GitHub's API could not be asked by the pull_request hook", {
      path,
      err: (err as Error).message,
    });
  }
  return null;
}

const KIND = 'pull_request';
const str = (o: Json, path: string, where = '') => field(o, path, where, KIND);

/** The change a pull_request event makes, or none. */
export async function pullRequestChanges(payload: Json, options: PullOptions): Promise<NewChange[]> {
  const number = payload.number;
  const pr = payload.pull_request;
  if (typeof number !== 'number' || !Number.isInteger(number))
    throw hookInvalid(`malformed ${KIND} payload: number is not an integer`);
  if (!isObject(pr)) throw hookInvalid(`malformed ${KIND} payload: pull_request is not an object`);
  const repo = str(payload, 'repository.full_name');
  const head = str(pr, 'head.sha', 'pull_request.');
  // Everything the change needs is read before GitHub is asked, so a bad payload costs no request.
  const base = {
    basename: str(pr, 'base.ref', 'pull_request.'),
    title: str(pr, 'title', 'pull_request.'),
    created: seconds(pr, 'created_at', 'pull_request.', KIND),
    revlink: str(pr, '_links.html.href', 'pull_request.'),
    repository: str(payload, 'repository.html_url'),
    project: str(pr, 'base.repo.full_name', 'pull_request.'),
    author: str(payload, 'sender.login'),
  };
  const commits = valueAt(pr, 'commits');
  const body = valueAt(pr, 'body');
  if (!ACTIONS.has(String(payload.action))) return [];
  const commit = await apiGet(`/repos/${repo}/commits/${head}`, options);
  const message = valueAt(isObject(commit) ? commit : {}, 'commit.message');
  const headMessage = commit === null ? 'No message field' : typeof message === 'string' ? message : '';
  if (options.skips.some((re) => re.test(headMessage))) return [];
  const listed = await apiGet(`/repos/${repo}/pulls/${number}/files`, options);
  const files = Array.isArray(listed)
    ? listed.flatMap((f) => (isObject(f) && typeof f.filename === 'string' ? [f.filename] : []))
    : [];
  const plural = commits !== 1 ? 's' : '';
  return [
    {
      author: base.author,
      files,
      comments: `GitHub Pull Request #${number} (${String(commits)} commit${plural})\n${base.title}\n${body ?? 'None'}`,
      revision: head,
      when_timestamp: base.created,
      branch: `refs/pull/${number}/${options.pullrequestRef}`,
      revlink: base.revlink,
      repository: base.repository,
      project: base.project,
      category: 'pull',
      properties: {
        pullrequesturl: base.revlink,
        event: 'pull_request',
        basename: base.basename,
        ...whitelistedProperties(pr, options.whitelist),
      },
      ...(options.codebase !== undefined ? { codebase: options.codebase } : {}),
      src: 'git',
    },
  ];
}
