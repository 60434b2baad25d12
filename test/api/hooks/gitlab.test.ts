// POST /change_hook/gitlab with the payloads GitLab documents (gitlab-push.json,
// gitlab-merge-request.json): a push makes one change per distinct commit and a merge request
// one change of its last commit, with the fields Buildbot 3.7's GitLabHandler gives them on
// the same payloads (checked by running it on these files); the secret token is checked.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, openHarness } from '../../core/data/harness.js';
import { changesAfter, hookApp, lastChangeId } from './lib.js';

const TOKEN = 'gl-secret-token';
const PUSH = readFileSync(new URL('./gitlab-push.json', import.meta.url), 'utf8');
const MR = readFileSync(new URL('./gitlab-merge-request.json', import.meta.url), 'utf8');

let h: Harness;
let app: FastifyInstance;
beforeAll(async () => {
  h = await openHarness();
  app = await hookApp(h, { gitlab: { secret_env: 'GL_TOKEN' } }, { GL_TOKEN: TOKEN });
});
afterAll(async () => {
  await app?.close();
  await h?.close();
});

async function deliver(body: string, headers: Record<string, string> = {}, url = '/change_hook/gitlab') {
  const before = await lastChangeId(h);
  const res = await app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', 'x-gitlab-token': TOKEN, ...headers },
    payload: body,
  });
  return { status: res.statusCode, text: res.body, changes: await changesAfter(h, before) };
}

const edit = (json: string, change: (p: any) => void) => {
  const p = JSON.parse(json);
  change(p);
  return JSON.stringify(p);
};

describe('a push', () => {
  it('makes one change per commit, as Buildbot makes them', async () => {
    const r = await deliver(PUSH, { 'x-gitlab-event': 'Push Hook' }, '/change_hook/gitlab?codebase=cb');
    expect([r.status, r.text]).toEqual([200, '2 change found']);
    expect(r.changes[0]).toMatchObject({
      author: 'Jordi Mallach <jordi@softcatala.org>',
      committer: null,
      comments:
        'Update Catalan translation to e38cb41.\n\nSee https://gitlab.com/gitlab-org/gitlab for more information',
      revision: 'b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327',
      when_timestamp: Date.parse('2011-12-12T14:27:31+02:00') / 1000,
      branch: 'master',
      revlink: 'http://example.com/mike/diaspora/commit/b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327',
      repository: 'git@example.com:mike/diaspora.git',
      project: 'Diaspora',
      category: 'push',
      codebase: 'cb',
      properties: { event: ['push', 'Change'] },
      users: 1,
    });
    expect([...r.changes[0]!.files].sort()).toEqual(['CHANGELOG', 'app/controller/application.rb']);
    expect(r.changes[1]).toMatchObject({
      author: 'GitLab dev user <gitlabdev@dv6700.(none)>',
      revision: 'da1560886d4f094c3e6c9ef40349f7d38b5d27d7',
    });
  });

  it('skips commits that are not distinct; a tag push is category tag_push', async () => {
    const tag = edit(PUSH, (p) => {
      p.object_kind = 'tag_push';
      p.ref = 'refs/tags/v1.0.0';
      p.commits[0].distinct = false;
    });
    const r = await deliver(tag);
    expect(r.text).toBe('1 change found');
    expect(r.changes[0]).toMatchObject({ branch: 'v1.0.0', category: 'tag_push', codebase: '' });
  });

  it('of a deleted branch, or of another kind of ref, makes none', async () => {
    expect((await deliver(edit(PUSH, (p) => (p.deleted = true)))).text).toBe('no change found');
    const notes = await deliver(edit(PUSH, (p) => (p.ref = 'refs/notes/commits')));
    expect([notes.text, notes.changes]).toEqual(['no change found', []]);
  });
});

describe('a merge request', () => {
  it('opened: one change of its last commit, with the source and target as properties', async () => {
    const r = await deliver(MR, { 'x-gitlab-event': 'Merge Request Hook' });
    expect([r.status, r.text]).toEqual([200, '1 change found']);
    expect(r.changes[0]).toMatchObject({
      author: 'GitLab dev user <gitlabdev@dv6700.(none)>',
      comments: 'MR#1: MS-Viewport\n\n',
      revision: 'da1560886d4f094c3e6c9ef40349f7d38b5d27d7',
      when_timestamp: Date.parse('2012-01-03T23:36:29+02:00') / 1000,
      branch: 'master',
      repository: 'http://example.com/awesome_space/awesome_project.git',
      project: 'Awesome Project',
      category: 'merge_request',
      revlink: 'http://example.com/diaspora/merge_requests/1',
      files: [],
    });
    expect(r.changes[0]!.properties).toEqual({
      source_branch: ['ms-viewport', 'Change'],
      source_project_id: [14, 'Change'],
      source_repository: ['http://example.com/awesome_space/awesome_project.git', 'Change'],
      source_git_ssh_url: ['git@example.com:awesome_space/awesome_project.git', 'Change'],
      target_branch: ['master', 'Change'],
      target_project_id: [14, 'Change'],
      target_repository: ['http://example.com/awesome_space/awesome_project.git', 'Change'],
      target_git_ssh_url: ['git@example.com:awesome_space/awesome_project.git', 'Change'],
      event: ['merge_request', 'Change'],
    });
  });

  it('merged, closed, or updated without new code: none; updated with code: one', async () => {
    const as = (state: string, action: string, oldrev?: string) =>
      edit(MR, (p) => {
        p.object_attributes.state = state;
        p.object_attributes.action = action;
        if (oldrev) p.object_attributes.oldrev = oldrev;
      });
    expect((await deliver(as('merged', 'merge'))).text).toBe('no change found');
    expect((await deliver(as('closed', 'close'))).text).toBe('no change found');
    expect((await deliver(as('opened', 'update'))).text).toBe('no change found');
    expect((await deliver(as('opened', 'update', '0123abcd'))).text).toBe('1 change found');
  });

  it('a note on it: one change with the note as `comments`; a note on a commit: none', async () => {
    const mr = JSON.parse(MR).object_attributes;
    const note = JSON.stringify({
      object_kind: 'note',
      object_attributes: { id: 5, note: 'retest' },
      merge_request: mr,
    });
    const r = await deliver(note);
    expect(r.text).toBe('1 change found');
    expect(r.changes[0]!.properties.comments).toEqual(['retest', 'Change']);
    expect(r.changes[0]!.category).toBe('note');
    const onCommit = JSON.stringify({ object_kind: 'note', object_attributes: { id: 6, note: 'nice' } });
    expect((await deliver(onCommit)).text).toBe('no change found');
  });
});

describe('refusals', () => {
  it('a missing or wrong token: 403, no change', async () => {
    for (const token of [undefined, 'wrong', `${TOKEN}x`]) {
      const before = await lastChangeId(h);
      const res = await app.inject({
        method: 'POST',
        url: '/change_hook/gitlab',
        headers: { 'content-type': 'application/json', ...(token ? { 'x-gitlab-token': token } : {}) },
        payload: PUSH,
      });
      expect([res.statusCode, res.body]).toEqual([403, 'Invalid secret']);
      expect(await changesAfter(h, before)).toEqual([]);
    }
  });

  it('a payload without its fields: 400 naming the field; not JSON: 400; a form: 415', async () => {
    const r = await deliver(edit(PUSH, (p) => delete p.commits[1].author));
    expect([r.status, r.text, r.changes]).toEqual([
      400,
      'malformed push payload: commits[1].author.name is not a string',
      [],
    ]);
    const mr = await deliver(edit(MR, (p) => delete p.object_attributes.last_commit));
    expect(mr.status).toBe(400);
    expect(mr.text).toMatch(/^malformed merge_request payload: object_attributes\.last_commit/);
    expect((await deliver('{')).status).toBe(400);
    expect((await deliver(PUSH, { 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(415);
  });

  it('an event it does not know makes no change', async () => {
    const r = await deliver(JSON.stringify({ object_kind: 'pipeline' }));
    expect([r.status, r.text]).toEqual([200, 'no change found']);
  });

  it('without a configured secret, no token is asked for; not configured: 404', async () => {
    const open = await hookApp(h, { gitlab: {} });
    const res = await open.inject({
      method: 'POST',
      url: '/change_hook/gitlab',
      headers: { 'content-type': 'application/json' },
      payload: PUSH,
    });
    expect(res.body).toBe('2 change found');
    await open.close();
    const none = await hookApp(h, { github: {} });
    expect(
      (await none.inject({ method: 'POST', url: '/change_hook/gitlab', payload: PUSH })).statusCode,
    ).toBe(404);
    await none.close();
  });
});
