// POST /change_hook/bitbucket with the POST service's documented payload (bitbucket-post.json)
// in a form, as Bitbucket sends it: one change per commit, with the fields Buildbot 3.7's
// BitBucketHandler gives them on the same payload (checked by running it on this file).
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, openHarness } from '../../core/data/harness.js';
import { changesAfter, hookApp, lastChangeId } from './lib.js';

const POST = readFileSync(new URL('./bitbucket-post.json', import.meta.url), 'utf8');

let h: Harness;
let app: FastifyInstance;
beforeAll(async () => {
  h = await openHarness();
  app = await hookApp(h, { bitbucket: {} });
});
afterAll(async () => {
  await app?.close();
  await h?.close();
});

async function deliver(form: Record<string, string>, url = '/change_hook/bitbucket', headers = {}) {
  const before = await lastChangeId(h);
  const res = await app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(form).toString(),
  });
  return { status: res.statusCode, text: res.body, changes: await changesAfter(h, before) };
}

describe('a POST service payload', () => {
  it('makes one change per commit, as Buildbot makes them', async () => {
    const r = await deliver({ payload: POST }, '/change_hook/bitbucket?project=px', {
      'x-event-key': 'repo:push',
    });
    expect([r.status, r.text]).toEqual([200, '1 change found']);
    expect(r.changes[0]).toMatchObject({
      author: 'Marcus Bertrand <marcus@somedomain.com>',
      files: ['somefile.py'],
      comments: 'Added some more things to somefile.py\n',
      revision: '620ade18607ac42d872b568bb92acaa9a28620e9',
      when_timestamp: Date.parse('2012-05-30T03:58:56Z') / 1000,
      branch: 'master',
      revlink: 'https://bitbucket.org/marcus/project-x/commits/620ade18607ac42d872b568bb92acaa9a28620e9',
      repository: 'https://bitbucket.org/marcus/project-x/',
      project: 'px',
      category: null,
      properties: { event: ['repo:push', 'Change'] },
      users: 1,
    });
  });

  it('without X-Event-Key the event is None; without ?project the project is empty', async () => {
    const r = await deliver({ payload: POST });
    expect(r.changes[0]).toMatchObject({ project: '', properties: { event: [null, 'Change'] } });
  });

  it('no payload, a payload that is not JSON, or a commit without its fields: 400, no change', async () => {
    expect(await deliver({})).toMatchObject({
      status: 400,
      text: 'the request has no payload field',
      changes: [],
    });
    expect((await deliver({ payload: '{' })).status).toBe(400);
    const p = JSON.parse(POST);
    delete p.commits[0].raw_node;
    expect(await deliver({ payload: JSON.stringify(p) })).toMatchObject({
      status: 400,
      text: 'malformed push payload: commits[0].raw_node is not a string',
      changes: [],
    });
  });
});
