// The process fuzz test: random and malformed requests (fuzz-requests.ts) thrown at a running
// API process (test/helpers/api.ts's apiProcess, with its own Redis) under the fuzzers' auth
// configuration (lib/fuzz-auth.ts), in which nobody it plays may act: anonymous clients, a
// logged-in user without control rights, forged sessions. It keeps what only a process over
// real sockets shows:
//   - the process never crashes or exits, its resident memory stays under a bound, and it
//     still serves, then stops with 0 on SIGTERM;
//   - nothing hangs: every request is answered (or its connection closed) within a bound,
//     with 32 in flight at once;
//   - what only a socket carries is answered in the contract's way: raw bytes no client
//     library sends, limits Node's parser enforces, websocket frames on /ws. Every answer is
//     held to the same checks as in process: no 5xx (but the 503 the contract gives when a
//     dependency does not answer in time: see UNAVAILABLE below), no stack trace, SQL, internal path, server-side error class or
//     session secret in an error answer (fuzz-leaks.ts), no markup in HTML.
//
//   FOCUS=1 npm test -- test/api/security/fuzz.test.ts                  # CI: FUZZ_COUNT=3000
//   FUZZ_COUNT=100000 FOCUS=1 npm test -- test/api/security/fuzz.test.ts # the benchmark
//
// FUZZ_SEED replays a run (the seed is printed); FUZZ_CONCURRENCY (32) sets the load.
//
// What does not need a process is garbage.fuzz.test.ts's, in process and in seconds: the same
// generator's HTTP requests under the same auth, that nothing they do changes the database (a
// checksum of every table), and an administrator's random calls, each refused one checked to
// change nothing (FUZZ.md).
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { parse, stringify } from 'yaml';
import {
  CATALOGUE,
  controlUnavailable,
  hookUnavailable,
  loginUnavailable,
} from '../../../services/api/errors/catalogue.js';
import { pyErrorBody } from '../../../services/api/errors/reply.js';
import { DEFAULT_WEB_DIR } from '../../../services/api/http/web-ui.js';
import { databaseUnavailable } from '../../../services/core/db/outage.js';
import { sql } from '../../../services/core/db/pool.js';
import { type ApiProcess, apiProcess } from '../../helpers/api.js';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';
import { startRedis } from '../../helpers/processes.js';
import { FUZZ_USERS, fuzzAuth } from '../lib/fuzz-auth.js';
import { ORACLE_MASTER_YAML } from '../lib/harness.js';
import { leaksIn } from './fuzz-leaks.js';
import { type FuzzRequest, FuzzRequests, Rng } from './fuzz-requests.js';

const COUNT = Number(process.env.FUZZ_COUNT ?? 3000);
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 32);
/**
 * Every request is answered, or its connection closed, within this: a bound on hanging, not
 * on speed, so wide enough for a loaded machine (the server cuts requests off at 30 s).
 */
const BOUND_MS = 40_000;
/** The API process's resident memory must stay under this. */
const RSS_LIMIT_MIB = 512;

let db: TestDatabase;
let redis: Awaited<ReturnType<typeof startRedis>> | undefined;
let api: ApiProcess | undefined;
let port: number;
let secret: string;

beforeAll(async () => {
  db = await createDatabase('fixture');
  redis = await startRedis();
  const dir = mkdtempSync(`${tmpdir()}/flotilla-fuzz-`);
  const config = parse(readFileSync(ORACLE_MASTER_YAML, 'utf8'));
  config.auth = await fuzzAuth();
  config.www = { rate_limit: { enabled: false } };
  writeFileSync(`${dir}/master.yaml`, stringify(config));
  api = await apiProcess({ databaseUrl: db.url, redisUrl: redis.url, config: `${dir}/master.yaml` });
  port = api.port;
});

afterAll(async () => {
  await api?.stop();
  await redis?.proc.stop('SIGTERM');
  await db?.drop();
});

// ------------------------------------------------------------------ sending

interface Answer {
  status: number;
  contentType: string;
  body: string;
  retryAfter?: string;
  /** The connection closed without an answer (raw garbage may get none). */
  closed?: boolean;
  ms: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
const MAX_BODY = 64 * 1024;

function sendRaw(bytes: Buffer): Promise<Answer> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      s.destroy();
      const text = data.toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      const cut = text.indexOf('\r\n\r\n');
      const head = cut < 0 ? text : text.slice(0, cut);
      const ct = /\r\ncontent-type: ([^\r\n]*)/i.exec(head)?.[1] ?? '';
      const retryAfter = /\r\nretry-after: ([^\r\n]*)/i.exec(head)?.[1];
      resolve(
        m
          ? {
              status: Number(m[1]),
              contentType: ct,
              body: data.subarray(cut + 4).toString('utf8'),
              ...(retryAfter === undefined ? {} : { retryAfter }),
              ms: Date.now() - t0,
            }
          : { status: 0, contentType: '', body: '', closed: true, ms: Date.now() - t0 },
      );
    };
    const timer = setTimeout(() => {
      resolve({ status: -1, contentType: '', body: '', ms: Date.now() - t0 });
      settled = true;
      s.destroy();
    }, BOUND_MS);
    s.on('data', (d: Buffer) => {
      if (data.length < MAX_BODY) data = Buffer.concat([data, d]);
    });
    s.on('end', finish);
    s.on('close', finish);
    s.on('error', finish);
    s.write(bytes);
    s.end();
  });
}

function toRaw(req: Extract<FuzzRequest, { kind: 'http' }>): Buffer {
  const head = [`${req.method} ${req.path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  for (const [k, v] of Object.entries(req.headers)) head.push(`${k}: ${v}`);
  if (req.body) head.push(`Content-Length: ${req.body.length}`);
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'utf8'), req.body ?? Buffer.alloc(0)]);
}

function sendHttp(req: Extract<FuzzRequest, { kind: 'http' }>): Promise<Answer> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    let r: ReturnType<typeof httpRequest>;
    try {
      r = httpRequest({
        host: '127.0.0.1',
        port,
        method: req.method,
        path: req.path,
        headers: req.headers,
        agent,
        // Bytes the client would refuse to send go over a raw socket instead.
        insecureHTTPParser: true,
      });
    } catch {
      sendRaw(toRaw(req)).then(resolve);
      return;
    }
    let answered: Answer | null = null;
    const timer = setTimeout(() => {
      r.destroy();
      // An answer whose headers came in time is an answer, even if its body is a stream that
      // never ends (SSE).
      resolve(answered ?? { status: -1, contentType: '', body: '', ms: Date.now() - t0 });
    }, BOUND_MS);
    r.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const contentType = String(res.headers['content-type'] ?? '');
      const retryAfter = res.headers['retry-after'];
      answered = {
        status: res.statusCode ?? 0,
        contentType,
        body: '',
        ...(retryAfter === undefined ? {} : { retryAfter }),
        ms: Date.now() - t0,
      };
      res.on('data', (d: Buffer) => {
        if (size < MAX_BODY) chunks.push(d);
        size += d.length;
        if (contentType.startsWith('text/event-stream')) {
          clearTimeout(timer);
          r.destroy();
          resolve({ ...answered!, body: Buffer.concat(chunks).toString('utf8') });
        }
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ ...answered!, body: Buffer.concat(chunks).toString('utf8'), ms: Date.now() - t0 });
      });
      res.on('error', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, contentType: '', body: '', ms: Date.now() - t0 });
      });
    });
    r.on('error', () => {
      // The server may answer early (413, 431) and close while the client still writes.
      clearTimeout(timer);
      sendRaw(toRaw(req)).then(resolve);
    });
    if (req.body) r.end(req.body);
    else r.end();
  });
}

function sendWs(req: Extract<FuzzRequest, { kind: 'ws' }>): Promise<Answer> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: req.headers });
    let settled = false;
    const done = (a: Omit<Answer, 'ms'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...a, ms: Date.now() - t0 });
    };
    const timer = setTimeout(() => {
      ws.terminate();
      done({ status: -1, contentType: '', body: '' });
    }, BOUND_MS);
    let replies = '';
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => {
        body += d;
      });
      res.on('end', () =>
        done({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body }),
      );
    });
    ws.on('open', () => {
      for (const f of req.frames) ws.send(f);
      setTimeout(() => ws.close(1000), 100);
    });
    ws.on('message', (m) => {
      if (replies.length < MAX_BODY) replies += m.toString();
    });
    ws.on('close', (code) =>
      // 1011 is the server's "internal error": the websocket's 500.
      done({ status: code === 1011 ? 500 : 101, contentType: 'websocket', body: replies }),
    );
    ws.on('error', () => done({ status: 0, contentType: '', body: '', closed: true }));
  });
}

function send(req: FuzzRequest): Promise<Answer> {
  if (req.kind === 'raw') return sendRaw(req.bytes);
  if (req.kind === 'ws') return sendWs(req);
  return sendHttp(req);
}

// ------------------------------------------------------------------ checks

/**
 * The answers the contract gives when something the API depends on does not answer in time:
 * a 503 with Retry-After and the catalogue's message, in the error shape of the route. They
 * are right under load, not a failure: the login throttle and the session store give Redis
 * 500 ms and then refuse the login rather than let it through unthrottled (LOGIN_UNAVAILABLE,
 * test/api/auth/login-throttle.test.ts), a query that gets no connection is DATABASE_UNAVAILABLE,
 * a hook's replay check HOOK_UNAVAILABLE, a stop or worker action Redis cannot carry to its
 * master CONTROL_UNAVAILABLE. Seen in full runs beside other suites (load average
 * 13 to 30): 1 or 2 logins of 3,000 requests. Any other 5xx, or a 503 of another shape or
 * without Retry-After, is still a problem.
 */
const UNAVAILABLE = [loginUnavailable(), databaseUnavailable(), hookUnavailable(), controlUnavailable()].map(
  (e) => ({
    code: e.code,
    retryAfter: String(CATALOGUE[e.code].retryAfter),
    // The API's errors ({"error": ...}, for REST and JSON-RPC alike) and a hook's (its message).
    bodies: [pyErrorBody(e.message), e.message],
  }),
);

/**
 * 503s of the catalogue this run cannot meet, so a 503 of one here is a problem: the fuzzed API
 * has no object store and no log or artifact was ever moved to one (docs/object-store.md).
 */
const NEVER_HERE = ['OBJECT_STORE_UNAVAILABLE'];

/** Whether a 503 is one of the contract's answers for a dependency away (UNAVAILABLE), or /readyz saying not ready. */
function unavailableAsPromised(req: FuzzRequest, a: Answer): boolean {
  if (a.status !== 503) return false;
  const head = req.kind === 'http' && req.method === 'HEAD';
  // Readiness: 503 while its checks do not answer in time is its purpose (the pod leaves the
  // rotation until they do); its body is the probe's, and it promises no Retry-After.
  if (req.kind === 'http' && /^\/readyz(?:\?|$)/.test(req.path))
    return a.body === (head ? '' : '{"status":"unavailable"}');
  return UNAVAILABLE.some(
    (u) => a.retryAfter === u.retryAfter && (head ? a.body === '' : u.bodies.includes(a.body)),
  );
}

interface Stats {
  count: number;
  /** 503s that were unavailableAsPromised (counted, not problems). */
  unavailable: number;
  statuses: Map<number, number>;
  byKind: Map<string, number>;
  problems: string[];
  slowest: number;
}

const describeReq = (req: FuzzRequest) =>
  req.kind === 'http'
    ? `${req.what}: ${req.method} ${req.path.slice(0, 200)}${req.body ? ` body ${JSON.stringify(req.body.toString('utf8').slice(0, 120))}` : ''}`
    : `${req.what}: ${JSON.stringify((req.kind === 'raw' ? req.bytes.toString('latin1') : req.frames.join(' | ')).slice(0, 160))}`;

const UI_INDEX = existsSync(`${DEFAULT_WEB_DIR}index.html`)
  ? readFileSync(`${DEFAULT_WEB_DIR}index.html`, 'utf8')
  : null;

function check(req: FuzzRequest, a: Answer, stats: Stats): void {
  stats.count++;
  stats.statuses.set(a.status, (stats.statuses.get(a.status) ?? 0) + 1);
  stats.byKind.set(req.what, (stats.byKind.get(req.what) ?? 0) + 1);
  stats.slowest = Math.max(stats.slowest, a.ms);
  const problem = (what: string) => {
    if (stats.problems.length < 50) stats.problems.push(`${what} <- ${describeReq(req)}`);
  };
  if (a.status === -1) {
    problem(`no answer within ${BOUND_MS} ms`);
    return;
  }
  if (unavailableAsPromised(req, a)) {
    stats.unavailable++;
    return;
  }
  if (a.status >= 500) {
    problem(
      `${a.status} ${a.retryAfter === undefined ? '' : `(Retry-After ${a.retryAfter}) `}${a.body.slice(0, 200)}`,
    );
    return;
  }
  // HTML that carries markup could run what a request put in it; the one page that carries
  // markup, the web UI's index.html, is a file served byte for byte, whatever was asked.
  if (/text\/html/i.test(a.contentType) && /[<>]/.test(a.body) && a.body !== UI_INDEX)
    problem(`markup in an HTML answer (${a.status})`);
  if (a.status < 400 && a.status !== 101) return;
  for (const leak of leaksIn(req, a.status, a.body)) problem(leak);
  if (secret && a.body.includes(secret)) problem(`the session secret in a ${a.status}`);
}

// ------------------------------------------------------------------ the process

function rssKiB(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return line ? Number(/(\d+)/.exec(line)![1]) : 0;
  } catch {
    return 0;
  }
}

async function loginCookie(user: string, password: string): Promise<string> {
  const a = await new Promise<string>((resolve, reject) => {
    const r = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/auth/login',
        headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
      },
      (res) => {
        res.resume();
        const c = String(res.headers['set-cookie'] ?? '');
        res.statusCode === 302
          ? resolve(/TWISTED_SESSION=([^;]+)/.exec(c)![1]!)
          : reject(new Error(String(res.statusCode)));
      },
    );
    r.on('error', reject);
    r.end();
  });
  return a;
}

// ------------------------------------------------------------------ the run

it("lets through only the contract's 503s: every code the catalogue answers 503, in its shape", () => {
  const catalogue503 = Object.entries(CATALOGUE)
    .filter(([code, e]) => e.status === 503 && !NEVER_HERE.includes(code))
    .map(([code]) => code);
  expect(UNAVAILABLE.map((u) => u.code).sort()).toEqual(catalogue503.sort());
  const login: FuzzRequest = { kind: 'http', method: 'GET', path: '/auth/login', headers: {}, what: '' };
  const body = pyErrorBody(loginUnavailable().message);
  const answer = (over: Partial<Answer>): Answer => ({ status: 503, contentType: '', body, ms: 1, ...over });
  expect(unavailableAsPromised(login, answer({ retryAfter: '5' }))).toBe(true);
  expect(unavailableAsPromised({ ...login, method: 'HEAD' }, answer({ body: '', retryAfter: '5' }))).toBe(
    true,
  );
  expect(unavailableAsPromised(login, answer({}))).toBe(false);
  expect(unavailableAsPromised(login, answer({ retryAfter: '5', body: pyErrorBody('internal error') }))).toBe(
    false,
  );
  expect(unavailableAsPromised(login, answer({ status: 500, retryAfter: '5' }))).toBe(false);
  expect(unavailableAsPromised(login, answer({ body: '', retryAfter: '5' }))).toBe(false);
  const readyz = { ...login, path: '/readyz' };
  expect(unavailableAsPromised(readyz, answer({ body: '{"status":"unavailable"}' }))).toBe(true);
  expect(unavailableAsPromised(readyz, answer({ body: body }))).toBe(false);
});

it(
  `${COUNT} random and malformed requests over sockets: no 500, no hang, no crash, bounded memory, no leak`,
  async () => {
    const started = Date.now();
    const fuzzer = await loginCookie('fuzzer', FUZZ_USERS.fuzzer);
    const [row] = await db.pool.query(sql`
    SELECT s.value_json FROM object_state s JOIN objects o ON o.id = s.objectid
    WHERE o.name = 'www' AND s.name = 'session_secret'`);
    secret = JSON.parse(row.value_json);
    const probe = await send({ kind: 'http', method: 'GET', path: '/ws', headers: {}, what: '' });
    const wsAvailable = probe.status === 426;
    const gen = new FuzzRequests(new Rng(SEED), { userSession: fuzzer, secret, wsAvailable });
    const proc = api!.proc;

    let maxRss = rssKiB(proc.pid);
    const sampler = setInterval(() => {
      maxRss = Math.max(maxRss, rssKiB(proc.pid));
    }, 200);

    const stats: Stats = {
      count: 0,
      unavailable: 0,
      statuses: new Map(),
      byKind: new Map(),
      problems: [],
      slowest: 0,
    };
    let issued = 0;
    const t0 = Date.now();
    try {
      // Everything at once, CONCURRENCY in flight.
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (issued < COUNT) {
            issued++;
            const req = gen.next();
            check(req, await send(req), stats);
          }
        }),
      );
      const ms = Date.now() - t0;
      clearInterval(sampler);
      maxRss = Math.max(maxRss, rssKiB(proc.pid));
      expect(proc.child.exitCode, `the API process exited:\n${proc.output().slice(-2000)}`).toBeNull();

      const summary = {
        seed: SEED,
        requests: stats.count,
        seconds: Math.round(ms / 100) / 10,
        per_second: Math.round((COUNT / ms) * 1000),
        max_rss_mib: Math.round(maxRss / 1024),
        slowest_ms: stats.slowest,
        statuses: Object.fromEntries([...stats.statuses].sort((a, b) => a[0] - b[0])),
        unavailable_as_promised: stats.unavailable,
        kinds: Object.fromEntries(stats.byKind),
        websocket: wsAvailable ? 'frames' : 'upgrade requests only (no /ws)',
      };
      console.log(`fuzz summary ${JSON.stringify(summary)}`);

      expect(stats.problems, `seed ${SEED}`).toEqual([]);
      expect(maxRss / 1024, 'resident memory of the API process (MiB)').toBeLessThan(RSS_LIMIT_MIB);
      // Every kind of answer was reached, those of Node's parser on a socket among them.
      for (const s of [200, 302, 400, 401, 403, 404, 413, 414, 415, 431]) {
        expect(stats.statuses.get(s) ?? 0, `answers with status ${s}`).toBeGreaterThan(0);
      }

      // Still alive and serving.
      const health = await send({ kind: 'http', method: 'GET', path: '/healthz', headers: {}, what: '' });
      expect(health.status).toBe(200);
      const read = await send({
        kind: 'http',
        method: 'GET',
        path: '/api/v2/builds/2',
        headers: {},
        what: '',
      });
      expect(JSON.parse(read.body).builds[0].buildid).toBe(2);
    } finally {
      clearInterval(sampler);
      agent.destroy();
    }
    expect(await api!.stop()).toBe(0);
    console.log(`fuzz total ${Math.round((Date.now() - started) / 1000)} s`);
  },
  120_000 + COUNT * 20,
);
