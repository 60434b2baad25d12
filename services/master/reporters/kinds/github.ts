// GitHub commit statuses, as Buildbot's GitHubStatusPush sends them: for each source stamp
// of the build with a revision, POST {baseURL}/repos/{owner}/{repo}/statuses/{sha} with
// {state, target_url, description, context} (GitHub's "create a commit status" API).
// - state: pending until the build is complete, then success (also for warnings and
//   skipped), failure, or error (exception, cancelled); a build ended RETRY is pending again.
// - owner and repo: the source stamp's project when it is `owner/repo`, else its repository URL.
// - context: an Interpolate template, `buildbot/%(prop:buildername)s` by default (Buildbot's,
//   so a branch protection rule that names Buildbot's contexts keeps working).
// - description: the report's body (the formatter's text: "Build started.", ...).
// - Authorization `token <token>`. Source stamps without a revision are skipped, as Buildbot
//   skips them. A failure is the job's (retried or given up, http-client.ts).
import type { GeneratorConfig, ReporterConfig } from '../../../core/config/master-config.js';
import { Results } from '../../../core/results.js';
import { interpolate } from '../../builds/interpolate.js';
import { renderable } from '../formatters.js';
import { gitRepoName } from '../git-url.js';
import { postEachStamp, request } from '../http-client.js';
import type { Report, Sender, SourceStamp } from '../report.js';
import type { ReporterKind } from './kind.js';

export const GITHUB_API = 'https://api.github.com';
export const DEFAULT_CONTEXT = 'buildbot/%(prop:buildername)s';

type State = 'pending' | 'success' | 'failure' | 'error';

const STATES: Record<number, State> = {
  [Results.SUCCESS]: 'success',
  [Results.WARNINGS]: 'success',
  [Results.FAILURE]: 'failure',
  [Results.SKIPPED]: 'success',
  [Results.EXCEPTION]: 'error',
  [Results.RETRY]: 'pending',
  [Results.CANCELLED]: 'error',
};

export function githubState(build: Report['builds'][number]): State {
  return build.complete ? (STATES[build.results ?? -1] ?? 'error') : 'pending';
}

/** The repository of a source stamp: `owner/repo` in its project, else its URL's. */
export function githubRepo(ss: SourceStamp): { owner: string; repo: string } | null {
  if (ss.project?.includes('/')) {
    const [owner, repo, ...rest] = ss.project.split('/');
    return owner && repo && rest.length === 0 ? { owner, repo } : null;
  }
  return ss.repository ? gitRepoName(ss.repository) : null;
}

type GithubConfig = Extract<ReporterConfig, { type: 'github' }>;

const noPatch = { add_patch: false } as const;

/** The status pushes' defaults: a pending report per request, a start and an end per build. */
export const STATUS_PUSH_GENERATORS: readonly GeneratorConfig[] = [
  { type: 'build_request', formatter: renderable('Build pending.'), ...noPatch },
  {
    type: 'build_start_end',
    start_formatter: renderable('Build started.'),
    end_formatter: renderable('Build done.'),
    ...noPatch,
  },
];

function githubSender(cfg: GithubConfig, token: string): Sender {
  const base = (cfg.baseURL ?? GITHUB_API).replace(/\/+$/, '');
  const headers = {
    Authorization: `token ${token}`,
    Accept: 'application/vnd.github+json',
    'Content-Type': 'application/json',
    'User-Agent': 'Flotilla',
  };
  return {
    async send(reports) {
      const report = reports[0]!;
      const build = report.builds[0]!;
      const state = githubState(build);
      const context = interpolate(cfg.context ?? DEFAULT_CONTEXT, build.properties);
      return postEachStamp(build.buildset.sourcestamps, async (ss) => {
        const repo = githubRepo(ss);
        if (!repo || !ss.revision) return false;
        const body: Record<string, unknown> = { state, target_url: build.url, context };
        if (typeof report.body === 'string') body.description = report.body;
        const path = ['repos', repo.owner, repo.repo, 'statuses', ss.revision]
          .map(encodeURIComponent)
          .join('/');
        await request('POST', `${base}/${path}`, headers, JSON.stringify(body));
        return true;
      });
    },
  };
}

export const github: ReporterKind<GithubConfig> = {
  defaultGenerators: STATUS_PUSH_GENERATORS,
  sender: (cfg, credential) => githubSender(cfg, credential(cfg, 'token')!),
};
