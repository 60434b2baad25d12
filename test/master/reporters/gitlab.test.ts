// The GitLab status reporter end to end, as github.test.ts does GitHub's: a build's statuses
// reach a forge on 127.0.0.1 that checks GitLab's documented requests: the project looked up
// by its path (GET /api/v4/projects/{owner%2Frepo}), then
// POST /api/v4/projects/{id}/statuses/{sha} with {state, ref, name, target_url, description},
// state one of pending, running, success, failed, canceled, skipped, and a PRIVATE-TOKEN.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { Forge, type Received } from '../../helpers/forge.js';
import { waitFor } from '../../helpers/wait.js';
import { ScriptedWorker, Stage } from '../in-process.js';
import { BUILDERS, requestBuild } from './builds.js';

const TOKEN = 'glpat-test-token';
const PROJECT_ID = 4242;
const STATES = new Set(['pending', 'running', 'success', 'failed', 'canceled', 'skipped']);
const LOOKUP = /^\/api\/v4\/projects\/acme%2Fwidgets$/;
const STATUS = new RegExp(`^/api/v4/projects/${PROJECT_ID}/statuses/[0-9a-f]{40}$`);
const KEYS = ['state', 'ref', 'name', 'context', 'target_url', 'description', 'coverage', 'pipeline_id'];

function gitlabShape(r: Omit<Received, 'status' | 'problems'>): string[] {
  const problems: string[] = [];
  if (r.headers['private-token'] !== TOKEN) problems.push('no PRIVATE-TOKEN');
  if (r.method === 'GET') return LOOKUP.test(r.url) ? problems : [...problems, `GET ${r.url}`];
  if (r.method !== 'POST' || !STATUS.test(r.url)) return [...problems, `${r.method} ${r.url}`];
  const body = r.body as Record<string, unknown> | undefined;
  if (typeof body !== 'object' || body === null) return [...problems, 'no JSON object'];
  if (!STATES.has(body.state as string)) problems.push(`state ${String(body.state)}`);
  for (const k of ['ref', 'name', 'target_url', 'description'])
    if (k in body && typeof body[k] !== 'string') problems.push(`${k} not a string`);
  const extra = Object.keys(body).filter((k) => !KEYS.includes(k));
  if (extra.length) problems.push(`unknown keys ${extra.join(', ')}`);
  return problems;
}

let stage: Stage;
let forge: Forge;
beforeAll(async () => {
  [stage, forge] = await Promise.all([
    Stage.open(),
    Forge.start(gitlabShape, (r) =>
      r.method === 'GET' ? { id: PROJECT_ID } : { id: 1, ...(r.body as object) },
    ),
  ]);
}, 60_000);
afterAll(async () => {
  await stage?.close();
  await forge?.close();
});

const config = () => `${BUILDERS}
reporters:
  - type: gitlab
    token: ${TOKEN}
    baseURL: ${forge.url}
    context: "ci/%(prop:buildername)s"
`;

describe('GitLab commit statuses', () => {
  it('posts pending, running and success for a build, after looking the project up once', async () => {
    const m = await stage.master('gl-a', config(), { timing: { reportBackoffMs: 50 } });
    const sha = 'c'.repeat(40);
    const { brid, builderid } = await requestBuild(stage, 'app', {
      repository: 'git@gitlab.com:acme/widgets.git',
      revision: sha,
    });
    const posts = () => forge.received.filter((r) => r.method === 'POST' && r.status === 201);
    await waitFor('the pending status', () => posts().length === 1);
    m.workers.connect(new ScriptedWorker('w1'));
    await waitFor('the final status', () => posts().length === 3);
    expect(forge.received.filter((r) => r.status >= 300)).toEqual([]);
    expect(forge.received.filter((r) => r.method === 'GET')).toHaveLength(1);
    const build = `http://flotilla.test/#/builders/${builderid}/builds/1`;
    expect(posts().map((r) => r.body)).toEqual([
      {
        state: 'pending',
        ref: 'main',
        name: 'ci/app',
        description: 'Build pending.',
        target_url: `http://flotilla.test/#/builders/${builderid}`,
      },
      { state: 'running', ref: 'main', name: 'ci/app', description: 'Build started.', target_url: build },
      { state: 'success', ref: 'main', name: 'ci/app', description: 'Build done.', target_url: build },
    ]);
    expect(posts()[0]!.url).toBe(`/api/v4/projects/${PROJECT_ID}/statuses/${sha}`);
    const [row] = await stage.db.pool.query(sql`SELECT results FROM builds WHERE buildrequestid = ${brid}`);
    expect(row.results).toBe(Results.SUCCESS);
    await m.stop();
  });
});
