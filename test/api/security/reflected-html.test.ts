// Review issue 13, finding 1 (high): POST /change_hook/<dialect> answered text/html and echoed the
// dialect from the URL, so a cross-site form POST ran a script on the API's origin, which then
// called JSON-RPC with the victim's cookie. Now: no answer reflects request input into HTML, hook
// answers are text/plain, an unknown dialect is a 404 that names nothing from the request, every
// answer says nosniff, and every HTML answer carries a strict CSP.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GITHUB_SECRET, type Reply, ReviewStack } from '../lib/review-stack.js';

let stack: ReviewStack;
beforeAll(async () => {
  stack = await ReviewStack.start();
});
afterAll(async () => {
  await stack?.close();
});

const MARK = '<script>alert(1)</script>';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

const mediaType = (a: Reply) =>
  String(a.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim();

function expectSafe(a: Reply): void {
  expect(a.headers['x-content-type-options']).toBe('nosniff');
  if (mediaType(a) === 'text/html') {
    expect(a.text).not.toContain('<script');
    expectStrictCsp(a);
  }
}

/** A policy that runs no inline or foreign script, and cannot be framed. */
function expectStrictCsp(a: Reply): void {
  const csp = String(a.headers['content-security-policy'] ?? '');
  const directives = new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...values]) => [name!, values]),
  );
  expect(directives.get('default-src')).toEqual(["'none'"]);
  const scripts = directives.get('script-src') ?? directives.get('default-src')!;
  for (const bad of ["'unsafe-inline'", "'unsafe-eval'", '*', 'data:', 'http:', 'https:'])
    expect(scripts).not.toContain(bad);
  expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
  expect(directives.get('base-uri')).toEqual(["'none'"]);
  expect(directives.has('form-action')).toBe(true);
}

describe('the change hooks', () => {
  it("the review's request: an unknown dialect is a plain 404 naming nothing from the request", async () => {
    const a = await stack.request('POST', `/change_hook/${encodeURIComponent(MARK)}`, {
      headers: FORM,
      payload: 'x=1',
    });
    expect(a.status).toBe(404);
    expect(mediaType(a)).toBe('text/plain');
    expect(a.text).toBe('not found');
    expectSafe(a);
  });

  it.each(['base', 'gitlab', 'nosuch', 'a%22b', '%3Cimg%20src%3Dx%3E'])(
    'a dialect that is not enabled (%s) is the same 404',
    async (dialect) => {
      const a = await stack.request('POST', `/change_hook/${dialect}`, { headers: FORM, payload: 'x=1' });
      expect([a.status, mediaType(a), a.text]).toEqual([404, 'text/plain', 'not found']);
      expectSafe(a);
    },
  );

  const sign = (body: string) => `sha256=${createHmac('sha256', GITHUB_SECRET).update(body).digest('hex')}`;
  it.each([
    ['no signature', { 'x-github-event': 'push', 'content-type': 'application/json' }, '{}', 403],
    [
      'a bad signature',
      { 'x-github-event': 'push', 'x-hub-signature-256': 'sha256=00', 'content-type': 'application/json' },
      '{}',
      403,
    ],
    [
      'an unknown event named with markup',
      { 'x-github-event': MARK, 'content-type': 'application/json' },
      '{}',
      400,
    ],
    ['a content type with markup', { 'x-github-event': 'push', 'content-type': `text/${MARK}` }, '{}', 415],
    [
      'a body that is not JSON',
      { 'x-github-event': 'push', 'content-type': 'application/json' },
      `{${MARK}`,
      400,
    ],
    ['a ping', { 'x-github-event': 'ping', 'content-type': 'application/json' }, '{"zen":"<b>x</b>"}', 200],
  ])('github: %s answers text/plain with nosniff', async (_what, headers, body, status) => {
    const h: Record<string, string> = { ...headers };
    if (!('x-hub-signature-256' in h) && _what !== 'no signature') h['x-hub-signature-256'] = sign(body);
    const a = await stack.request('POST', '/change_hook/github', { headers: h, payload: body });
    expect(a.status).toBe(status);
    expect(mediaType(a)).toBe('text/plain');
    expectSafe(a);
  });
});

describe('every answer', () => {
  // Requests that carry markup in every place a server might echo: path, query, headers.
  const probes: [string, string, Record<string, string>, string?][] = [
    ['GET', `/api/v2/${encodeURIComponent(MARK)}`, {}],
    ['GET', `/api/v2/builds?field=${encodeURIComponent(MARK)}`, {}],
    ['GET', `/api/v2/builds?${encodeURIComponent(MARK)}=1`, {}],
    ['GET', `/api/v2/builds?order=${encodeURIComponent(MARK)}`, {}],
    [
      'OPTIONS',
      '/api/v2/builds',
      { origin: 'http://flotilla.test:8010', 'access-control-request-method': 'GET' },
    ],
    ['OPTIONS', '/api/v2/builds', { origin: `http://${MARK}`, 'access-control-request-method': 'GET' }],
    [
      'POST',
      '/api/v2/builds/2',
      { 'content-type': 'application/json' },
      `{"jsonrpc":"2.0","method":"${MARK}","id":1,"params":{}}`,
    ],
    ['POST', '/api/v2/builds/2', { 'content-type': `text/${MARK}` }, 'x'],
    ['PUT', `/api/v2/${MARK}`, {}],
    ['GET', `/${encodeURIComponent(MARK)}`, {}],
    ['GET', `/auth/login?redirect=${encodeURIComponent(MARK)}`, {}],
    ['GET', `/auth/logout?redirect=${encodeURIComponent(MARK)}`, {}],
    ['GET', `/config?${encodeURIComponent(MARK)}`, {}],
    ['GET', '/ws', {}],
    ['GET', `/sse/add/${encodeURIComponent(MARK)}/x`, {}],
    ['GET', '/healthz', {}],
  ];
  it.each(probes)('%s %s: no markup reflected into HTML, nosniff', async (method, url, headers, payload) => {
    const a = await stack.request(method, url, { headers, ...(payload ? { payload } : {}) });
    expectSafe(a);
  });

  it("HTML that an API pod serves (the web UI's index.html) gets the strict policy from the app", async () => {
    const s = await ReviewStack.start({
      db: stack.db,
      redis: stack.redis,
      beforeReady: (app) =>
        app.get('/index.html', (_req, reply) =>
          reply.type('text/html; charset=utf-8').send('<!doctype html>'),
        ),
    });
    try {
      const a = await s.get('/index.html');
      expect(a.status).toBe(200);
      expect(mediaType(a)).toBe('text/html');
      expect(a.headers['x-content-type-options']).toBe('nosniff');
      expectStrictCsp(a);
    } finally {
      await s.close();
    }
  });

  it('answers that are not HTML still forbid framing and scripts', async () => {
    for (const url of ['/api/v2/builders', '/api/v2/nosuch', '/config']) {
      const csp = String((await stack.get(url)).headers['content-security-policy'] ?? '');
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
    }
  });
});
