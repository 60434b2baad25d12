// Review issue 13, finding 2 (high): force authorization.
// - A force rule limited to some builders allowed the call when any requested builder
//   matched, and then started all of them (Buildbot 3.7 has the same flaw): every requested
//   builder must be allowed.
// - `builderid` started a builder the scheduler does not list: a scheduler only ever starts
//   its own builders; anything else is a 400 in Buildbot's -32602 shape.
// - Unknown force parameters were silently ignored: refused in the same shape.
// - An unknown method on /forceschedulers/X answered 200 `result: null`: -32601 as on every
//   other path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { BUILDERS, type Reply, ReviewStack } from '../lib/review-stack.js';

let stack: ReviewStack;
let admin: string;
let dev: string;
let guest: string;
beforeAll(async () => {
  stack = await ReviewStack.start();
  [admin, dev, guest] = [await stack.login('admin'), await stack.login('dev'), await stack.login('guest')];
});
afterAll(async () => {
  await stack?.close();
});

/** The builder ids of the requests a force answer created. */
async function startedBuilders(a: Reply): Promise<number[]> {
  expect(a.status).toBe(200);
  const [bsid] = a.json().result as [number, Record<string, number>];
  const rows = await stack.db.pool.query(
    sql`SELECT builderid FROM buildrequests WHERE buildsetid = ${bsid} ORDER BY builderid`,
  );
  return rows.map((r) => r.builderid as number);
}

function expectRefusedParams(a: Reply, field: string): void {
  expect(a.status).toBe(400);
  expect(String(a.headers['content-type']).split(';')[0]).toBe('application/json');
  const body = a.json();
  expect(body.jsonrpc).toBe('2.0');
  expect(body.id).toBe(1);
  expect(body.error.code).toBe(-32602);
  expect(typeof body.error.message).toBe('object');
  expect(Object.keys(body.error.message)).toContain(field);
}

function expectForbidden(a: Reply): void {
  expect(a.status).toBe(403);
  expect(a.json().error.code).toBe(-32600);
}

describe('a force rule limited to some builders', () => {
  it("the review's call: a developer allowed [runtests, flaky] asks for runtests and deploy: 403, nothing starts", async () => {
    const before = await stack.buildsets();
    const a = await stack.rpc(
      '/forceschedulers/force-multi',
      'force',
      { builderNames: ['runtests', 'deploy'] },
      { session: dev },
    );
    expectForbidden(a);
    expect(await stack.buildsets()).toBe(before);
  });

  it('every requested builder allowed: the call passes and starts exactly those', async () => {
    const a = await stack.rpc(
      '/forceschedulers/force-multi',
      'force',
      { builderNames: ['flaky', 'runtests'] },
      { session: dev },
    );
    expect(await startedBuilders(a)).toEqual([BUILDERS.runtests, BUILDERS.flaky]);
  });

  it('without builderNames the scheduler starts all its builders, so the rule must allow all of them', async () => {
    const before = await stack.buildsets();
    expectForbidden(await stack.rpc('/forceschedulers/force-multi', 'force', {}, { session: dev }));
    expect(await stack.buildsets()).toBe(before);
    const a = await stack.rpc('/forceschedulers/force-multi', 'force', {}, { session: admin });
    expect(await startedBuilders(a)).toEqual([BUILDERS.deploy, BUILDERS.runtests, BUILDERS.flaky]);
  });

  it('by builderid: allowed for a builder the rule names, refused for one it does not', async () => {
    const ok = await stack.rpc(
      '/forceschedulers/force-multi',
      'force',
      { builderid: BUILDERS.flaky },
      { session: dev },
    );
    expect(await startedBuilders(ok)).toEqual([BUILDERS.flaky]);
    expectForbidden(
      await stack.rpc(
        '/forceschedulers/force-multi',
        'force',
        { builderid: BUILDERS.deploy },
        { session: dev },
      ),
    );
  });

  it('a user with no role is refused everything', async () => {
    expectForbidden(await stack.rpc('/forceschedulers/force-runtests', 'force', {}, { session: guest }));
    expectForbidden(await stack.rpc('/forceschedulers/force-runtests', 'force', {}));
  });
});

describe('a scheduler starts only its own builders', () => {
  it("the review's call: force-runtests with the builderid of deploy is a 400 -32602, nothing starts", async () => {
    const before = await stack.buildsets();
    const a = await stack.rpc(
      '/forceschedulers/force-runtests',
      'force',
      { builderid: BUILDERS.deploy },
      { session: admin },
    );
    expectRefusedParams(a, 'builderid');
    expect(await stack.buildsets()).toBe(before);
  });

  it.each([
    ['a name it does not list among its own', { builderNames: ['runtests', 'package'] }, 'builderNames'],
    ['only names it does not list', { builderNames: ['package'] }, 'builderNames'],
    ['an empty list', { builderNames: [] }, 'builderNames'],
    ['names that are not strings', { builderNames: [4] }, 'builderNames'],
    ['builderNames that is not a list', { builderNames: 'runtests' }, 'builderNames'],
    ['a builderid of no builder', { builderid: 99999 }, 'builderid'],
    ['a builderid that is not a number', { builderid: 'runtests' }, 'builderid'],
  ])('%s: 400 -32602', async (_what, params, field) => {
    const before = await stack.buildsets();
    expectRefusedParams(
      await stack.rpc('/forceschedulers/force-multi', 'force', params, { session: admin }),
      field,
    );
    expect(await stack.buildsets()).toBe(before);
  });

  it('its own builder by id is fine', async () => {
    const a = await stack.rpc(
      '/forceschedulers/force-runtests',
      'force',
      { builderid: BUILDERS.runtests },
      { session: admin },
    );
    expect(await startedBuilders(a)).toEqual([BUILDERS.runtests]);
  });
});

describe('force parameters', () => {
  it('an unknown parameter is refused with -32602 naming it, nothing starts', async () => {
    const before = await stack.buildsets();
    const a = await stack.rpc(
      '/forceschedulers/force-runtests',
      'force',
      { reason: 'r', nosuch: 'x' },
      { session: admin },
    );
    expectRefusedParams(a, 'nosuch');
    expect(await stack.buildsets()).toBe(before);
  });

  it('every parameter of the form is known: the form as the web UI sends it passes', async () => {
    const a = await stack.rpc(
      '/forceschedulers/force-runtests',
      'force',
      {
        builderid: BUILDERS.runtests,
        reason: 'r',
        username: 'a <a@example.org>',
        branch: 'main',
        revision: '',
        repository: '',
        project: '',
        sleep: '1',
      },
      { session: admin },
    );
    expect(await startedBuilders(a)).toEqual([BUILDERS.runtests]);
  });
});

describe('an unknown method on a force scheduler', () => {
  it('is -32601 (501), as on every other path, not 200 result null', async () => {
    const a = await stack.rpc('/forceschedulers/force-runtests', 'frobnicate', {}, { session: admin });
    expect(a.status).toBe(501);
    expect(a.json().error).toEqual({ code: -32601, message: 'action: frobnicate is not supported' });
  });
});
