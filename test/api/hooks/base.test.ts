// POST /change_hook/base: Buildbot's form fields (form-encoded, multipart, or a JSON object)
// make one change; the answer is Buildbot's text ("1 change found", 200), as text/plain
// (docs/security.md); bad input is 400 with the reason, an unknown content type 415, a body over 1 MiB 413, never a 500.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, openHarness } from '../../core/data/harness.js';
import { changesAfter, hookApp, lastChangeId } from './lib.js';

let h: Harness;
let app: FastifyInstance;
beforeAll(async () => {
  h = await openHarness();
  app = await hookApp(h, { base: { enabled: true } });
});
afterAll(async () => {
  await app?.close();
  await h?.close();
});

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

async function post(
  payload: string | Buffer,
  headers: Record<string, string> = FORM,
  url = '/change_hook/base',
) {
  const before = await lastChangeId(h);
  const res = await app.inject({ method: 'POST', url, headers, payload });
  return { res, changes: await changesAfter(h, before) };
}

describe('a change from the base hook', () => {
  it('takes every form field, as Buildbot does', async () => {
    // The fields stored as sent.
    const plain = {
      author: 'Jane Doe <jane@example.org>',
      committer: 'CI <ci@example.org>',
      comments: 'Fix the frobnicator\n\nDetails.',
      revision: 'a1b2c3',
      branch: 'main',
      category: 'push',
      revlink: 'https://git.example.org/c/a1b2c3',
      repository: 'https://git.example.org/repo.git',
      project: 'frob',
      codebase: 'frob-core',
    };
    const { res, changes } = await post(
      form({
        ...plain,
        when_timestamp: '1700000000.75',
        files: JSON.stringify(['src/z.c', 'src/a.c', 'docs/ü.md']),
        properties: JSON.stringify({ ticket: 42, reviewers: ['a', 'b'] }),
      }),
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body).toBe('1 change found');
    expect(changes).toHaveLength(1);
    const [c] = changes;
    expect(c).toMatchObject({
      ...plain,
      when_timestamp: 1700000000,
      properties: { ticket: [42, 'Change'], reviewers: [['a', 'b'], 'Change'] },
      users: 0,
    });
    expect([...c!.files].sort()).toEqual(['docs/ü.md', 'src/a.c', 'src/z.c']);
    // The event the schedulers hear.
    const events = await h.tap.events(`changes/${c!.changeid}/new`);
    expect(events).toHaveLength(1);
    expect(events[0]!.m).toMatchObject({ changeid: c!.changeid, author: c!.author, branch: 'main' });
  });

  it('defaults: no branch, no revision, repository and project "", the time now', async () => {
    const now = Math.floor(Date.now() / 1000);
    const { res, changes } = await post(form({ author: 'me' }));
    expect(res.body).toBe('1 change found');
    expect(changes[0]).toMatchObject({
      author: 'me',
      comments: '',
      branch: null,
      revision: null,
      repository: '',
      project: '',
      codebase: '',
      files: [],
      properties: {},
    });
    expect(changes[0]!.when_timestamp).toBeGreaterThanOrEqual(now);
  });

  it('reads `who` and `when` when author and when_timestamp are absent, and the query string too', async () => {
    const { changes } = await post(
      form({ who: 'old-script', when: '1600000000', branch: 'body' }),
      FORM,
      '/change_hook/base?branch=query&comments=from%20the%20query',
    );
    expect(changes[0]).toMatchObject({
      author: 'old-script',
      when_timestamp: 1600000000,
      branch: 'body',
      comments: 'from the query',
    });
    // With no body at all, the query string alone (and /change_hook is the base dialect).
    const bare = await post('', {}, '/change_hook?author=q&revision=r9');
    expect(bare.res.body).toBe('1 change found');
    expect(bare.changes[0]).toMatchObject({ author: 'q', revision: 'r9' });
  });

  it('takes a JSON object, files and properties as JSON values or as JSON text', async () => {
    const { res, changes } = await post(
      JSON.stringify({ author: 'json', files: ['a', 'b'], properties: { x: 1 }, when_timestamp: 1650000000 }),
      { 'content-type': 'application/json; charset=utf-8' },
    );
    expect(res.body).toBe('1 change found');
    expect(changes[0]).toMatchObject({
      author: 'json',
      properties: { x: [1, 'Change'] },
      when_timestamp: 1650000000,
    });
    expect([...changes[0]!.files].sort()).toEqual(['a', 'b']);
    const text = await post(JSON.stringify({ author: 'json', files: '["c"]', properties: '{"y": true}' }), {
      'content-type': 'application/json',
    });
    expect(text.changes[0]).toMatchObject({ files: ['c'], properties: { y: [true, 'Change'] } });
  });

  it('takes a multipart form', async () => {
    const body = new FormData();
    body.set('author', 'multi');
    body.set('files', '["m.c"]');
    const req = new Request('http://x/', { method: 'POST', body });
    const { res, changes } = await post(Buffer.from(await req.arrayBuffer()), {
      'content-type': req.headers.get('content-type')!,
    });
    expect(res.body).toBe('1 change found');
    expect(changes[0]).toMatchObject({ author: 'multi', files: ['m.c'] });
  });
});

describe('refusals', () => {
  it.each([
    ['no author', form({ comments: 'x' }), /author is required/],
    ['files that are not JSON', form({ author: 'a', files: 'src/a.c' }), /files is not valid JSON/],
    ['files that are not a list', form({ author: 'a', files: '"abc"' }), /files must be a JSON list/],
    ['files that are not names', form({ author: 'a', files: '[1]' }), /files must be a JSON list/],
    [
      'properties that are not an object',
      form({ author: 'a', properties: '[1]' }),
      /properties must be a JSON object/,
    ],
    [
      'a time that is not a number',
      form({ author: 'a', when_timestamp: 'abc' }),
      /when_timestamp must be a number/,
    ],
    [
      'a branch too long for its column',
      form({ author: 'a', branch: 'b'.repeat(256) }),
      /branch is longer than 255/,
    ],
  ])('%s: 400 with the reason, no change', async (_what, body, message) => {
    const { res, changes } = await post(body);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body).toMatch(message);
    expect(changes).toEqual([]);
  });

  it('malformed JSON: 400; a JSON list: 400', async () => {
    const json = { 'content-type': 'application/json' };
    expect((await post('{"author": ', json)).res.statusCode).toBe(400);
    expect((await post('["author"]', json)).res.body).toBe('the body must be a JSON object');
    expect((await post(Buffer.from([0x7b, 0xff, 0x7d]), json)).res.body).toBe('the body is not UTF-8 text');
  });

  it('an unknown content type, or a body without one: 415', async () => {
    const plain = await post('author=a', { 'content-type': 'text/plain' });
    expect(plain.res.statusCode).toBe(415);
    expect(plain.res.body).toBe('Unknown content type: text/plain');
    expect((await post('author=a', {})).res.statusCode).toBe(415);
    expect(plain.changes).toEqual([]);
  });

  it('a body over 1 MiB: 413', async () => {
    const { res, changes } = await post(form({ author: 'a', comments: 'x'.repeat(1024 * 1024) }));
    expect(res.statusCode).toBe(413);
    expect(changes).toEqual([]);
  });

  it('a dialect not enabled: 404 not found, naming nothing back', async () => {
    const { res } = await post(form({ author: 'a' }), FORM, '/change_hook/gitlab');
    expect(res.statusCode).toBe(404);
    expect(res.body).toBe('not found');
    const off = await hookApp(h, undefined);
    const r = await off.inject({
      method: 'POST',
      url: '/change_hook/base',
      headers: FORM,
      payload: 'author=a',
    });
    expect(r.statusCode).toBe(404);
    expect(r.body).toBe('not found');
    await off.close();
  });
});
