// Finding 8 (low), item by item:
// - /ws (and /sse) ignored Origin where REST refuses a foreign one: the same rule now;
// - the GitHub hook accepted a replayed delivery: a delivery id, or a signed body, is
//   remembered for a day, and a duplicate makes no change;
// - answers that depend on who asks carry Cache-Control: private and Vary: Cookie,
//   Authorization whenever authorization is not fully open;
// - /logs/N/contents?limit=2147483647&offset=2147483647 was a 500: an empty page now;
// - GET /auth/login?token= and /auth/logout from another site (login CSRF, forced logout):
//   refused when Sec-Fetch-Site says cross-site;
// - /metrics and /readyz on the public port: metrics only on the probe port, readiness
//   cheap and without details;
// - the raw log cache shared a folder under /tmp and deleted folders it believed dead: each
//   process has a private 0700 folder and removes only its own;
// - (found on the way) an html log a build wrote was sent with the web UI's policy, which
//   lets the origin's scripts run: it keeps the sandbox.
import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RawLogCache } from '../../services/api/read/raw-log-cache.js';
import { addLog, appendLog, transact } from '../../services/core/data/index.js';
import { sql } from '../../services/core/db/pool.js';
import { claimsOf } from '../api/auth/lib.js';
import { GITHUB_SECRET, PUBLIC_URL, ReviewStack, sessionOf } from './lib.js';

let stack: ReviewStack;
let base: string;
beforeAll(async () => {
  stack = await ReviewStack.start();
  base = await stack.listen();
});
afterAll(async () => {
  await stack?.close();
});

const OWN_ORIGIN = new URL(PUBLIC_URL).origin;

describe('/ws and /sse apply the Origin rule REST applies', () => {
  /** The status of a websocket upgrade with this Origin (101 when it opened). */
  function upgrade(origin: string | undefined): Promise<number> {
    return new Promise((resolve, reject) => {
      const s = new WebSocket(`${base.replace('http', 'ws')}/ws`, origin ? { origin } : {});
      s.once('open', () => {
        s.close();
        resolve(101);
      });
      s.once('unexpected-response', (_q, res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      s.once('error', reject);
    });
  }

  it('a foreign page cannot open a websocket; our own page, and a client without Origin, can', async () => {
    expect(await upgrade('http://evil.example')).toBe(400);
    expect(await upgrade(OWN_ORIGIN)).toBe(101);
    expect(await upgrade(undefined)).toBe(101);
    const rest = await stack.get('/api/v2/changes', { headers: { origin: 'http://evil.example' } });
    expect(rest.status).toBe(400);
  });

  it('nor an event stream', async () => {
    const foreign = await fetch(`${base}/sse/listen/changes/*/*`, {
      headers: { origin: 'http://evil.example' },
    });
    expect([foreign.status, await foreign.text()]).toEqual([400, '{"error": "invalid origin"}']);
  });
});

describe('GitHub deliveries are not replayed', () => {
  const payload = (n: number) =>
    JSON.stringify({
      ref: 'refs/heads/main',
      repository: { html_url: 'https://github.com/octo/hello', full_name: 'octo/hello' },
      head_commit: { message: `commit ${n}` },
      commits: [
        {
          id: `${n}`.padStart(40, '0'),
          message: `commit ${n}`,
          timestamp: '2026-11-24T10:00:00Z',
          url: `https://github.com/octo/hello/commit/${n}`,
          author: { name: 'Octo', email: 'octo@example.org' },
          committer: { name: 'Octo', email: 'octo@example.org' },
          added: [],
          modified: ['a.c'],
          removed: [],
        },
      ],
    });
  const deliver = (body: string, delivery: string) =>
    stack.request('POST', '/change_hook/github', {
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-github-delivery': delivery,
        'x-hub-signature-256': `sha256=${createHmac('sha256', GITHUB_SECRET).update(body).digest('hex')}`,
      },
      payload: body,
    });
  const changes = async () =>
    (await stack.db.pool.query(sql`SELECT count(*)::int AS n FROM changes`))[0]!.n as number;

  it("the review's replay: one signed delivery three times makes one change", async () => {
    const before = await changes();
    const body = payload(1);
    const id = randomUUID();
    expect((await deliver(body, id)).text).toBe('1 change found');
    expect((await deliver(body, id)).text).toBe('no change found');
    // Another id on the same signed body (the signature does not cover the headers).
    expect((await deliver(body, randomUUID())).text).toBe('no change found');
    expect(await changes()).toBe(before + 1);
    // Another delivery is another change.
    expect((await deliver(payload(2), randomUUID())).text).toBe('1 change found');
    expect(await changes()).toBe(before + 2);
  });
});

describe('answers that depend on who asks', () => {
  it('are private to the asker, and vary with the cookie and the authorization', async () => {
    const admin = await stack.login('admin');
    for (const [url, session] of [
      ['/api/v2/changes', undefined],
      ['/api/v2/builders/4/builds', admin],
      ['/api/v2/builders/2/builds', undefined],
      ['/api/v2/logs/1/raw', admin],
      ['/api/v2/nosuch', undefined],
    ] as const) {
      const a = await stack.get(url, session ? { session } : {});
      expect(a.headers['cache-control'], url).toBe('private');
      const vary = String(a.headers.vary)
        .split(',')
        .map((v) => v.trim().toLowerCase());
      expect(vary, url).toEqual(expect.arrayContaining(['cookie', 'authorization']));
    }
  });

  it('without any rule (everything open to everyone) they stay shareable', async () => {
    const open = await ReviewStack.start({
      db: stack.db,
      redis: stack.redis,
      patch: (c) => {
        c.auth = { ...c.auth, users: [], allow_rules: undefined };
      },
    });
    try {
      const a = await open.get('/api/v2/changes', { headers: { accept: 'application/json' } });
      expect(a.status).toBe(200);
      expect(a.headers['cache-control']).toBeUndefined();
      expect(a.headers.vary).toBe('Accept');
    } finally {
      await open.close();
    }
  });
});

describe('log contents past any end', () => {
  it("the review's request is an empty page, not a 500", async () => {
    const a = await stack.get('/api/v2/logs/1/contents?limit=2147483647&offset=2147483647', {
      headers: { accept: 'application/json' },
    });
    expect(a.status).toBe(200);
    expect(a.json().logchunks).toEqual([{ logid: 1, firstline: 2147483647, content: '' }]);
    const whole = await stack.get('/api/v2/logs/1/contents?limit=2147483647', {
      headers: { accept: 'application/json' },
    });
    expect(whole.json().logchunks[0].content.split('\n')).toHaveLength(165);
  });
});

describe('login and logout from another site', () => {
  const crossSite = { 'sec-fetch-site': 'cross-site' };

  it('a token login or a logout a foreign page sets off is refused, leaving the session as it was', async () => {
    const dev = await stack.login('dev');
    const login = await stack.get('/auth/login?token=attackers.own.token', {
      headers: crossSite,
      session: dev,
    });
    expect(login.status).toBe(403);
    expect(login.cookies).toEqual([]);
    const out = await stack.get('/auth/logout', { headers: crossSite, session: dev });
    expect(out.status).toBe(403);
    expect(out.cookies).toEqual([]);
    expect((await stack.get('/config', { session: dev })).json().user.username).toBe('dev');
  });

  it('from our own pages, another page of the same site, or typed in: as before', async () => {
    for (const site of ['same-origin', 'same-site', 'none']) {
      const dev = await stack.login('dev');
      const out = await stack.get('/auth/logout', { headers: { 'sec-fetch-site': site }, session: dev });
      expect(out.status, site).toBe(302);
      expect(claimsOf(sessionOf(out)!).user_info).toEqual({ anonymous: true });
    }
    const plain = await stack.login('dev');
    expect((await stack.get('/auth/logout', { session: plain })).status).toBe(302);
  });
});

describe('the public port', () => {
  it('has no /metrics, and a readiness without details', async () => {
    expect((await stack.get('/metrics')).status).toBe(404);
    const ready = await stack.get('/readyz');
    expect([ready.status, ready.json()]).toEqual([200, { status: 'ready' }]);
    // The details are the probe port's (services/api/service.ts serves these).
    expect((await stack.app.probes.metrics()).body).toContain('flotilla_http_requests_total');
  });
});

describe("the raw log cache's folders", () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'flotilla-raw-root-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('each process gets a private 0700 folder, and removes only its own', async () => {
    // What another process (dead or alive, another user or not) left there.
    const theirs = join(root, `raw-${process.pid}-theirs`);
    mkdirSync(theirs);
    const a = await RawLogCache.open(root, 1024 * 1024);
    const b = await RawLogCache.open(root, 1024 * 1024);
    const mine = readdirSync(root).filter((n) => join(root, n) !== theirs);
    expect(mine).toHaveLength(2);
    for (const n of mine) expect(statSync(join(root, n)).mode & 0o777).toBe(0o700);
    await a.close();
    await b.close();
    expect(readdirSync(root)).toEqual([`raw-${process.pid}-theirs`]);
  });

  it('a root that is a link to somewhere else is not used', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'flotilla-elsewhere-'));
    const link = join(root, 'link');
    try {
      symlinkSync(elsewhere, link);
      await expect(RawLogCache.open(link, 1024)).rejects.toThrow(/not a directory/);
      expect(readdirSync(elsewhere)).toEqual([]);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});

describe('HTML that a build wrote', () => {
  it("is a download whose policy runs nothing, not the web UI's", async () => {
    const [step] = await stack.db.pool.query(sql`SELECT id FROM steps ORDER BY id LIMIT 1`);
    const logid = await transact({ db: stack.db.pool, redis: stack.redis }, async (tx) => {
      const id = await addLog(tx, step.id, `report ${randomUUID()}`, 'h');
      await appendLog(tx, id, '<script>fetch("/api/v2/workers/1",{method:"POST"})</script>\n');
      return id;
    });
    const admin = await stack.login('admin');
    const a = await stack.get(`/api/v2/logs/${logid}/raw`, { session: admin });
    expect(a.status).toBe(200);
    expect(String(a.headers['content-type'])).toMatch(/^text\/html/);
    expect(String(a.headers['content-disposition'])).toMatch(/^attachment/);
    const csp = String(a.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain('sandbox');
    expect(csp).not.toContain("script-src 'self'");
  });
});
