// POST /change_hook/github with the pull_request event GitHub documents
// (github-pull-request.json): GitHub's API, played by a server on 127.0.0.1 that refuses any
// request not shaped as GitHub documents it, is asked for the head commit's message and the
// files, and one change is made as Buildbot 3.7's handle_pull_request makes it.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Harness, openHarness } from '../../core/data/harness.js';
import { Forge } from '../../helpers/forge.js';
import { changesAfter, hookApp, lastChangeId } from './lib.js';

const SECRET = 'pr-secret';
const TOKEN = 'ghp_pull-request-token';
const PR = readFileSync(new URL('./github-pull-request.json', import.meta.url), 'utf8');
const HEAD = 'ec26c3e57ca3a959ca5aad62de7213c562f8c821';
const COMMIT_PATH = `/repos/Codertocat/Hello-World/commits/${HEAD}`;
const FILES_PATH = '/repos/Codertocat/Hello-World/pulls/2/files';

let h: Harness;
let app: FastifyInstance;
let github: Forge;
let headMessage = 'Update README.md';
beforeAll(async () => {
  h = await openHarness();
  github = await Forge.start(
    (r) => {
      const problems: string[] = [];
      if (r.method !== 'GET') problems.push(`method ${r.method}`);
      if (![COMMIT_PATH, FILES_PATH].includes(r.url)) problems.push(`path ${r.url}`);
      if (r.headers['user-agent'] !== 'Buildbot') problems.push('no User-Agent: Buildbot');
      if (r.headers.authorization !== `token ${TOKEN}`) problems.push('no Authorization: token <token>');
      return problems;
    },
    (r) =>
      r.url === COMMIT_PATH
        ? { sha: HEAD, commit: { message: headMessage } }
        : [
            { sha: 'a1', filename: 'README.md', status: 'modified' },
            { sha: 'b2', filename: 'docs/new.md', status: 'added' },
          ],
  );
  app = await hookApp(
    h,
    {
      github: {
        secret_env: 'GH_SECRET',
        token_env: 'GH_TOKEN',
        github_api_endpoint: github.url,
        github_property_whitelist: ['github.head.ref', 'github.head.s?a'],
        codebase: 'hello',
      },
    },
    { GH_SECRET: SECRET, GH_TOKEN: TOKEN },
  );
});
afterAll(async () => {
  await app?.close();
  await github?.close();
  await h?.close();
});
beforeEach(() => {
  github.received.length = 0;
  github.fail = () => undefined;
  headMessage = 'Update README.md';
});

const sign = (body: string) => `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;

async function deliver(body: string) {
  const before = await lastChangeId(h);
  const res = await app.inject({
    method: 'POST',
    url: '/change_hook/github',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'pull_request',
      'x-hub-signature-256': sign(body),
    },
    payload: body,
  });
  return { status: res.statusCode, text: res.body, changes: await changesAfter(h, before) };
}

const edit = (change: (p: any) => void) => {
  const p = JSON.parse(PR);
  change(p);
  return JSON.stringify(p);
};

describe('a pull request opened', () => {
  it('makes one change on refs/pull/<n>/merge, its files and message asked from the API', async () => {
    const r = await deliver(PR);
    expect([r.status, r.text]).toEqual([200, '1 change found']);
    expect(github.received.map((x) => [x.url, x.status])).toEqual([
      [COMMIT_PATH, 200],
      [FILES_PATH, 200],
    ]);
    expect(r.changes[0]).toMatchObject({
      author: 'Codertocat',
      comments:
        'GitHub Pull Request #2 (1 commit)\nUpdate the README with new information.\nThis is a pretty simple change that we need to pull into master.',
      revision: HEAD,
      when_timestamp: Date.parse('2019-05-15T15:20:33Z') / 1000,
      branch: 'refs/pull/2/merge',
      revlink: 'https://github.com/Codertocat/Hello-World/pull/2',
      repository: 'https://github.com/Codertocat/Hello-World',
      project: 'Codertocat/Hello-World',
      category: 'pull',
      codebase: 'hello',
    });
    expect([...r.changes[0]!.files].sort()).toEqual(['README.md', 'docs/new.md']);
    expect(r.changes[0]!.properties).toEqual({
      pullrequesturl: ['https://github.com/Codertocat/Hello-World/pull/2', 'Change'],
      event: ['pull_request', 'Change'],
      basename: ['master', 'Change'],
      'github.head.ref': ['changes', 'Change'],
      'github.head.sha': [HEAD, 'Change'],
    });
  });

  it('synchronize and reopened make one; closed, labeled or edited none, without asking GitHub', async () => {
    for (const action of ['synchronize', 'reopened'])
      expect((await deliver(edit((p) => (p.action = action)))).text).toBe('1 change found');
    github.received.length = 0;
    for (const action of ['closed', 'labeled', 'edited'])
      expect((await deliver(edit((p) => (p.action = action)))).text).toBe('no change found');
    expect(github.received).toEqual([]);
  });

  it('a head commit whose message says [ci skip] makes none', async () => {
    headMessage = 'Typo [ci skip]';
    expect((await deliver(PR)).text).toBe('no change found');
  });

  it('a null body reads "None", as Python writes it; several commits are "commits"', async () => {
    const r = await deliver(
      edit((p) => {
        p.pull_request.body = null;
        p.pull_request.commits = 3;
      }),
    );
    expect(r.changes[0]!.comments).toBe(
      'GitHub Pull Request #2 (3 commits)\nUpdate the README with new information.\nNone',
    );
  });

  it("when GitHub's API fails, the change is made with no files (as Buildbot)", async () => {
    github.fail = () => 502;
    // Another body: the same one again would be a replay (no change).
    const r = await deliver(edit((p) => (p.pull_request.title = 'Another title')));
    expect(r.text).toBe('1 change found');
    expect(r.changes[0]!.files).toEqual([]);
  });

  it('a payload without its fields: 400 naming the field, and GitHub is not asked', async () => {
    const r = await deliver(edit((p) => delete p.pull_request.head));
    expect([r.status, r.text, r.changes]).toEqual([
      400,
      'malformed pull_request payload: pull_request.head.sha is not a string',
      [],
    ]);
    expect((await deliver(edit((p) => (p.number = 'two')))).status).toBe(400);
    expect(github.received).toEqual([]);
  });
});
