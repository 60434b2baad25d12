// POST /change_hook/github: a push with a valid signature makes one change per commit, as
// Buildbot's hook makes them; a missing or wrong signature is 403; ping makes none; other
// events, malformed payloads and content types are refused without a change.
import { createHmac } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { githubOptions } from '../../../services/api/hooks/dialects.js';
import { ConfigError } from '../../../services/core/config/errors.js';
import { type Harness, openHarness } from '../../core/data/harness.js';
import { changesAfter, githubConfig, hookApp, lastChangeId } from './lib.js';

const SECRET = 'It’s a Secret to Everybody';
const PUSH = readFileSync(new URL('./github-push.json', import.meta.url), 'utf8');

let h: Harness;
let app: FastifyInstance;
beforeAll(async () => {
  h = await openHarness();
  app = await hookApp(h, { github: { secret_env: 'GH_SECRET' } }, { GH_SECRET: SECRET });
});
afterAll(async () => {
  await app?.close();
  await h?.close();
});

const sign = (body: string, algorithm: 'sha1' | 'sha256' = 'sha256', secret = SECRET) =>
  `${algorithm}=${createHmac(algorithm, secret).update(body).digest('hex')}`;

async function deliver(
  body: string,
  headers: Record<string, string>,
  target: FastifyInstance = app,
): Promise<{ status: number; text: string; changes: Awaited<ReturnType<typeof changesAfter>> }> {
  const before = await lastChangeId(h);
  const res = await target.inject({
    method: 'POST',
    url: '/change_hook/github',
    headers: { 'content-type': 'application/json', 'x-github-event': 'push', ...headers },
    payload: body,
  });
  return { status: res.statusCode, text: res.body, changes: await changesAfter(h, before) };
}

const push = (edit: (p: any) => void = () => {}) => {
  const p = JSON.parse(PUSH);
  edit(p);
  return JSON.stringify(p);
};

describe('a signed push', () => {
  it('makes one change per commit, with the fields Buildbot gives them', async () => {
    const { status, text, changes } = await deliver(PUSH, { 'x-hub-signature-256': sign(PUSH) });
    expect(status).toBe(200);
    expect(text).toBe('2 change found');
    expect(changes).toHaveLength(2);
    const [first, second] = changes;
    expect(first).toMatchObject({
      author: 'Mona Lisa <mona@example.org>',
      committer: 'GitHub <noreply@github.com>',
      comments: 'Add the greeting\n\nSays hello to everyone.',
      revision: '2e3d1f8ab0ac7f6d4cb5bc0a2c3f1e6a5b7a9c01',
      when_timestamp: Date.parse('2024-05-10T12:03:11Z') / 1000,
      branch: 'main',
      revlink: 'https://github.com/octo-org/hello-world/commit/2e3d1f8ab0ac7f6d4cb5bc0a2c3f1e6a5b7a9c01',
      repository: 'https://github.com/octo-org/hello-world',
      project: 'octo-org/hello-world',
      category: null,
      codebase: '',
      properties: { github_distinct: [true, 'Change'], event: ['push', 'Change'] },
      // src 'git': the author is linked to a user.
      users: 1,
    });
    expect([...first!.files].sort()).toEqual(['README.md', 'src/greet.c']);
    expect(second).toMatchObject({
      author: 'Octo Cat <octocat@github.com>',
      comments: 'Fix the greeting ✓',
      revision: '0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c',
      when_timestamp: Date.parse('2024-05-10T12:07:45Z') / 1000,
      properties: { github_distinct: [false, 'Change'], event: ['push', 'Change'] },
    });
    expect([...second!.files].sort()).toEqual(['Makefile', 'old/hello.txt', 'src/greet.c']);
  });

  it('accepts the older sha1 signature alone, and a form-encoded payload', async () => {
    // Another body than the suite's first delivery of PUSH, which would be a replay.
    const again = push((p) => {
      p.compare = 'https://github.com/octo/hello/compare/sha1';
    });
    expect((await deliver(again, { 'x-hub-signature': sign(again, 'sha1') })).text).toBe('2 change found');
    const form = new URLSearchParams({ payload: PUSH }).toString();
    const r = await deliver(form, {
      'content-type': 'application/x-www-form-urlencoded',
      'x-hub-signature-256': sign(form),
    });
    expect(r.text).toBe('2 change found');
    expect(r.changes.map((c) => c.revision)).toEqual([
      '2e3d1f8ab0ac7f6d4cb5bc0a2c3f1e6a5b7a9c01',
      '0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c',
    ]);
  });

  it('a tag is category "tag"; a created ref builds its head commit only', async () => {
    const tag = push((p) => {
      p.ref = 'refs/tags/v1.0';
    });
    const t = await deliver(tag, { 'x-hub-signature-256': sign(tag) });
    expect(t.changes.map((c) => [c.branch, c.category])).toEqual([
      ['v1.0', 'tag'],
      ['v1.0', 'tag'],
    ]);
    const created = push((p) => {
      p.created = true;
      p.ref = 'refs/heads/feature/x';
    });
    const c = await deliver(created, { 'x-hub-signature-256': sign(created) });
    expect(c.text).toBe('1 change found');
    expect(c.changes.map((x) => [x.branch, x.revision])).toEqual([
      ['feature/x', '0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c'],
    ]);
  });

  it.each([
    ['a deleted branch', (p: any) => Object.assign(p, { deleted: true })],
    ['a ref that is not a branch or a tag', (p: any) => Object.assign(p, { ref: 'refs/pull/1/merge' })],
    ['[skip ci] in the head commit', (p: any) => Object.assign(p.head_commit, { message: 'wip [skip ci]' })],
    [
      '[ci skip] in the head commit',
      (p: any) => Object.assign(p.head_commit, { message: 'wip [ ci skip ]' }),
    ],
  ])('%s makes no change', async (_what, edit) => {
    const body = push(edit);
    const r = await deliver(body, { 'x-hub-signature-256': sign(body) });
    expect([r.status, r.text, r.changes]).toEqual([200, 'no change found', []]);
  });

  it('ping and workflow_run make no change', async () => {
    const ping = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 });
    for (const event of ['ping', 'workflow_run']) {
      const r = await deliver(ping, { 'x-github-event': event, 'x-hub-signature-256': sign(ping) });
      expect([r.status, r.text, r.changes]).toEqual([200, 'no change found', []]);
    }
  });
});

describe('refusals', () => {
  it.each([
    ['no signature', {}, 'Request has no required signature'],
    [
      'a signature made with another secret',
      { 'x-hub-signature-256': sign(PUSH, 'sha256', 'guess') },
      'Hash mismatch',
    ],
    ['a signature of another body', { 'x-hub-signature-256': sign(`${PUSH} `) }, 'Hash mismatch'],
    ['a truncated signature', { 'x-hub-signature-256': sign(PUSH).slice(0, 40) }, 'Hash mismatch'],
    ['a signature that is not hex', { 'x-hub-signature-256': 'sha256=zz' }, 'Wrong signature format'],
    ['an unknown algorithm', { 'x-hub-signature': `md5=${'0'.repeat(32)}` }, 'Wrong signature format'],
    [
      'a wrong sha256 beside a right sha1',
      { 'x-hub-signature-256': sign(PUSH, 'sha256', 'guess'), 'x-hub-signature': sign(PUSH, 'sha1') },
      'Hash mismatch',
    ],
  ])('%s: 403', async (_what, headers, message) => {
    const r = await deliver(PUSH, headers);
    expect([r.status, r.text, r.changes]).toEqual([403, message, []]);
  });

  it('another event: 400 "Unknown event", as Buildbot', async () => {
    const body = JSON.stringify({ action: 'opened' });
    for (const [event, name] of [
      ['issues', 'issues'],
      ['check_suite', 'check_suite'],
    ]) {
      const r = await deliver(body, { 'x-github-event': event!, 'x-hub-signature-256': sign(body) });
      expect([r.status, r.text]).toEqual([400, `Unknown event: ${name}`]);
    }
    const none = await app.inject({
      method: 'POST',
      url: '/change_hook/github',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': sign(body) },
      payload: body,
    });
    expect([none.statusCode, none.body]).toEqual([400, 'Unknown event: None']);
  });

  it('malformed JSON, or a push without its fields: 400', async () => {
    const bad = '{"ref": "refs/heads/main", ';
    const r = await deliver(bad, { 'x-hub-signature-256': sign(bad) });
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/^the payload is not valid JSON/);
    const noCommits = push((p) => {
      p.commits = null;
    });
    const n = await deliver(noCommits, { 'x-hub-signature-256': sign(noCommits) });
    expect([n.status, n.text]).toEqual([400, 'malformed push payload: commits is not a list']);
    const noAuthor = push((p) => {
      delete p.commits[1].author;
    });
    const a = await deliver(noAuthor, { 'x-hub-signature-256': sign(noAuthor) });
    expect([a.status, a.text, a.changes]).toEqual([
      400,
      'malformed push payload: commits[1].author.name is not a string',
      [],
    ]);
    const badDate = push((p) => {
      p.commits[0].timestamp = 'yesterday';
    });
    const d = await deliver(badDate, { 'x-hub-signature-256': sign(badDate) });
    expect([d.status, d.text]).toEqual([400, 'malformed push payload: commits[0].timestamp is not a date']);
  });

  it('another content type: 415', async () => {
    const r = await deliver(PUSH, { 'content-type': 'text/plain', 'x-hub-signature-256': sign(PUSH) });
    expect([r.status, r.text, r.changes]).toEqual([415, 'Unknown content type: text/plain', []]);
  });
});

describe('the secret', () => {
  it('without one configured, signatures are not checked', async () => {
    const open = await hookApp(h, { github: { codebase: 'web' } });
    const r = await deliver(PUSH, {}, open);
    expect(r.text).toBe('2 change found');
    expect(r.changes.map((c) => c.codebase)).toEqual(['web', 'web']);
    await open.close();
  });

  it('is read from a file (trimmed), or refused at start when it cannot be had', async () => {
    const file = join(tmpdir(), `gh-secret-${process.pid}`);
    writeFileSync(file, `${SECRET}\n`);
    expect(githubOptions(githubConfig({ secret_file: file })).secret).toBe(SECRET);
    expect(() => githubOptions(githubConfig({ secret_env: 'NOPE' }), {})).toThrow(ConfigError);
    expect(() => githubOptions(githubConfig({ secret_file: join(tmpdir(), 'no-such-file') }))).toThrow(
      /cannot read/,
    );
    await expect(hookApp(h, { github: { secret_env: 'NOPE' } }, {})).rejects.toThrow(/NOPE is not set/);
  });
});
