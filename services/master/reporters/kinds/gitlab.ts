// GitLab commit statuses, as Buildbot's GitLabStatusPush sends them: for each source stamp,
// POST {baseURL}/api/v4/projects/{id}/statuses/{sha} with {state, ref, name, target_url,
// description} (GitLab's "set the pipeline status of a commit" API), header PRIVATE-TOKEN.
// - state: pending for a request, running once the build has started, then success (also
//   warnings and skipped), failed (failure, exception), canceled, or pending again (RETRY).
// - the project: the `source_project_id` property (set by GitLab's merge request hook), else
//   looked up once by the repository URL's `owner/repo` (GET /api/v4/projects/{owner%2Frepo})
//   and remembered.
// - ref: the `source_branch` property, else the source stamp's branch; name: the context
//   template, `buildbot/%(prop:buildername)s` by default.
// Unlike Buildbot, a stamp without a revision is skipped (Buildbot posts to .../statuses/None).
import type { ReporterConfig } from '../../../core/config/master-config.js';
import { Results } from '../../../core/results.js';
import { interpolate } from '../../builds/interpolate.js';
import { gitRepoName } from '../git-url.js';
import { DeliveryError, postEachStamp, request } from '../http-client.js';
import type { BuildDict, Sender, SourceStamp } from '../report.js';
import { DEFAULT_CONTEXT, STATUS_PUSH_GENERATORS } from './github.js';
import type { ReporterKind } from './kind.js';

export const GITLAB_URL = 'https://gitlab.com';

type State = 'pending' | 'running' | 'success' | 'failed' | 'canceled';

const STATES: Record<number, State> = {
  [Results.SUCCESS]: 'success',
  [Results.WARNINGS]: 'success',
  [Results.FAILURE]: 'failed',
  [Results.SKIPPED]: 'success',
  [Results.EXCEPTION]: 'failed',
  [Results.RETRY]: 'pending',
  [Results.CANCELLED]: 'canceled',
};

export function gitlabState(build: BuildDict): State {
  if (build.complete) return STATES[build.results ?? -1] ?? 'failed';
  return build.started_at ? 'running' : 'pending';
}

type GitlabConfig = Extract<ReporterConfig, { type: 'gitlab' }>;

function gitlabSender(cfg: GitlabConfig, token: string): Sender {
  const base = (cfg.baseURL ?? GITLAB_URL).replace(/\/+$/, '');
  const headers = { 'PRIVATE-TOKEN': token, 'Content-Type': 'application/json', 'User-Agent': 'Flotilla' };
  const projectIds = new Map<string, number>();

  async function projectId(ss: SourceStamp, props: BuildDict['properties']): Promise<number | string | null> {
    const given = props.source_project_id?.[0];
    if (typeof given === 'number' || (typeof given === 'string' && given)) return given;
    const name = ss.repository ? gitRepoName(ss.repository) : null;
    if (!name) return null;
    const full = `${name.owner}/${name.repo}`;
    const known = projectIds.get(full);
    if (known !== undefined) return known;
    const res = await request('GET', `${base}/api/v4/projects/${encodeURIComponent(full)}`, headers);
    const id = (JSON.parse(res.text) as { id?: unknown }).id;
    if (typeof id !== 'number') throw new DeliveryError(`GitLab project ${full} has no id`, false);
    projectIds.set(full, id);
    return id;
  }

  return {
    async send(reports) {
      const report = reports[0]!;
      const build = report.builds[0]!;
      const state = gitlabState(build);
      const context = interpolate(cfg.context ?? DEFAULT_CONTEXT, build.properties);
      return postEachStamp(build.buildset.sourcestamps, async (ss) => {
        if (!ss.revision) return false;
        const id = await projectId(ss, build.properties);
        if (id === null) return false;
        const branch = build.properties.source_branch?.[0] ?? ss.branch;
        const body: Record<string, unknown> = { state, ref: branch, target_url: build.url, name: context };
        if (typeof report.body === 'string') body.description = report.body;
        const path = `api/v4/projects/${encodeURIComponent(String(id))}/statuses/${encodeURIComponent(ss.revision)}`;
        await request('POST', `${base}/${path}`, headers, JSON.stringify(body));
        return true;
      });
    },
  };
}

export const gitlab: ReporterKind<GitlabConfig> = {
  defaultGenerators: STATUS_PUSH_GENERATORS,
  sender: (cfg, credential) => gitlabSender(cfg, credential(cfg, 'token')!),
};
