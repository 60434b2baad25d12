// Random and malformed requests for the fuzz test, from a seeded generator (the same seed
// gives the same requests): paths made from the registry's patterns with hostile pieces,
// query strings, JSON-RPC bodies good and bad, logins with garbage credentials and forged
// tokens, session cookies forged every way, hostile headers and methods, oversized bodies,
// URLs and headers, raw bytes no HTTP client would send, and websocket frames.
import { createHmac } from 'node:crypto';
import {
  BAD_PERCENT,
  FIELD_NAMES as FIELDS,
  NAMES,
  NUMBERS,
  OPS,
  PATTERNS,
  WORDS,
} from '../lib/fuzz-pieces.js';

export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 1;
  }
  /** mulberry32 */
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(a: readonly T[]): T {
    return a[this.int(a.length)]!;
  }
  weighted<T>(choices: readonly [number, () => T][]): T {
    const total = choices.reduce((s, [w]) => s + w, 0);
    let r = this.next() * total;
    for (const [w, f] of choices) {
      r -= w;
      if (r < 0) return f();
    }
    return choices.at(-1)![1]();
  }
  bytes(n: number): Buffer {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = this.int(256);
    return b;
  }
  string(max: number, alphabet?: string): string {
    const n = this.int(max + 1);
    let s = '';
    for (let i = 0; i < n; i++) {
      if (alphabet) s += alphabet[this.int(alphabet.length)];
      else {
        const kind = this.int(10);
        const cp =
          kind < 6
            ? 0x20 + this.int(0x5f)
            : kind < 7
              ? this.int(0x20)
              : kind < 9
                ? 0xa0 + this.int(0x2000)
                : 0x1f300 + this.int(0x300);
        s += String.fromCodePoint(cp);
      }
    }
    return s;
  }
}

export type FuzzRequest =
  | {
      kind: 'http';
      method: string;
      path: string;
      headers: Record<string, string>;
      body?: Buffer;
      what: string;
    }
  | { kind: 'raw'; bytes: Buffer; what: string }
  | { kind: 'ws'; headers: Record<string, string>; frames: (string | Buffer)[]; what: string };

// The hostile pieces (NAMES, NUMBERS, BAD_PERCENT, OPS...) are the in-process fuzzer's too.
const METHODS = [
  'stop',
  'rebuild',
  'cancel',
  'force',
  'pause',
  'unpause',
  'kill',
  'enable',
  'nosuch',
  '',
  '__proto__',
  'constructor',
];
const CONTROL_PATHS = [
  '/builds/2',
  '/builds/1',
  '/builders/4/builds/1',
  '/builders/runtests/builds/2',
  '/buildrequests/101',
  '/buildrequests/2',
  '/forceschedulers/force-runtests',
  '/forceschedulers/force-flaky',
  '/forceschedulers/force-deploy',
  '/workers/1',
  '/workers/worker1',
  '/schedulers/1',
  '/builds',
  '/masters/1',
];

export interface FuzzContext {
  /** The fuzz user's valid session (no control rights). */
  userSession: string;
  /** The session secret, to forge tokens that are signed but wrong in other ways. */
  secret: string;
  wsAvailable: boolean;
}

const b64 = (o: unknown) => Buffer.from(typeof o === 'string' ? o : JSON.stringify(o)).toString('base64url');

export class FuzzRequests {
  constructor(
    private readonly r: Rng,
    private readonly ctx: FuzzContext,
  ) {}

  private token(): string {
    const r = this.r;
    return r.weighted<string>([
      [4, () => encodeURIComponent(r.pick(NUMBERS))],
      [3, () => r.pick([...NAMES, ...WORDS])],
      [2, () => encodeURIComponent(r.string(10).replace(/[\uD800-\uDFFF]/g, ''))],
      [1, () => r.pick(BAD_PERCENT)],
      [1, () => ''],
      [1, () => r.string(8, "abcdef0123456789._-~!$&'()*+,;=:@")],
    ]);
  }

  private apiPath(): string {
    const r = this.r;
    return r.weighted<string>([
      [
        5,
        () => {
          const pattern = r.pick(PATTERNS);
          if (pattern === '') return '';
          const segs = pattern.split('/').map((s) => (s.includes(':') || r.chance(0.1) ? this.token() : s));
          return `/${segs.join('/')}`;
        },
      ],
      [
        2,
        () => {
          const n = r.int(12);
          const segs = Array.from({ length: n }, () => (r.chance(0.5) ? r.pick(WORDS) : this.token()));
          return n ? `/${segs.join('/')}` : '';
        },
      ],
      [1, () => `${r.pick(CONTROL_PATHS)}${r.pick(['', '/', '//', '/.', '/..', '/%2F', '/x'])}`],
    ]);
  }

  private query(): string {
    const r = this.r;
    if (r.chance(0.3)) return '';
    if (r.chance(0.15)) {
      return `?${Array.from({ length: r.int(8) }, () => r.pick([this.token(), '&', '=', '&&', '==', '?', '+', ';', '#'])).join('')}`;
    }
    const pairs = Array.from({ length: 1 + r.int(6) }, () => {
      const name = r.weighted<string>([
        [4, () => r.pick(FIELDS)],
        [3, () => `${r.pick(FIELDS)}__${r.pick(OPS)}`],
        [3, () => r.pick(['order', 'field', 'limit', 'offset', 'property', 'redirect', 'token'])],
        [1, () => this.token()],
      ]);
      const value = r.weighted<string>([
        [3, () => this.token()],
        [2, () => `${r.chance(0.5) ? '-' : ''}${r.pick(FIELDS)}`],
        [2, () => r.pick(['on', 'OFF', 'yes', 'true', '1', '0', '*', '-', ''])],
      ]);
      return `${name}=${value}`;
    });
    return `?${pairs.join('&')}`;
  }

  /** A TWISTED_SESSION value: none, the fuzz user's, or forged. */
  private cookie(): string | undefined {
    const r = this.r;
    const sign = (data: string) => createHmac('sha256', this.ctx.secret).update(data).digest('base64url');
    const admin = {
      user_info: { username: 'admin', groups: ['admins'] },
      exp: Math.floor(Date.now() / 1000) + 3600,
    };
    return r.weighted<string | undefined>([
      [5, () => undefined],
      [3, () => this.ctx.userSession],
      [1, () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(admin)}.`],
      [1, () => `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(admin)}.${sign('other')}`],
      [
        1,
        () => {
          const [h, , s] = this.ctx.userSession.split('.');
          return `${h}.${b64(admin)}.${s}`;
        },
      ],
      [
        1,
        () => {
          // Signed, but expired.
          const data = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ ...admin, exp: 1 })}`;
          return `${data}.${sign(data)}`;
        },
      ],
      [1, () => r.string(40, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.')],
      [1, () => `${b64(r.string(30))}.${b64(r.string(60))}.${b64(r.string(20))}`],
      [1, () => 'a.'.repeat(r.int(3000))],
    ]);
  }

  private headers(): Record<string, string> {
    const r = this.r;
    const h: Record<string, string> = {};
    const c = this.cookie();
    if (c !== undefined) {
      h.cookie = r.chance(0.2) ? `a=b; TWISTED_SESSION=${c}; TWISTED_SESSION=x; c` : `TWISTED_SESSION=${c}`;
    }
    if (r.chance(0.5)) h.accept = r.pick(['application/json', 'text/html', '*/*', 'application/jsonx', '']);
    if (r.chance(0.1))
      h.origin = r.pick(['http://evil.example', 'null', 'http://flotilla.test:8010', r.string(20, 'abc:/.')]);
    if (r.chance(0.05)) h['x-forwarded-for'] = r.pick(['1.2.3.4', '::1, 10.0.0.1', 'garbage', '999.1.1.1']);
    if (r.chance(0.05)) h['if-none-match'] = r.pick(['*', '"x"', 'W/"abc", "def"', r.string(20, 'abc"/W, ')]);
    if (r.chance(0.05)) h['access-control-request-method'] = r.pick(['GET', 'POST', 'DELETE', '']);
    if (r.chance(0.03)) h.authorization = `Basic ${b64(r.string(20))}`;
    return h;
  }

  private rpcBody(): { body: Buffer; ctype: string | undefined } {
    const r = this.r;
    const ctype = r.weighted<string | undefined>([
      [8, () => 'application/json'],
      [1, () => 'application/json; charset=utf-8'],
      [1, () => 'APPLICATION/JSON'],
      [1, () => undefined],
      [
        1,
        () =>
          r.pick([
            'text/plain',
            'application/x-www-form-urlencoded',
            'multipart/form-data',
            'application/jsonx',
            '',
          ]),
      ],
    ]);
    const params = (): unknown =>
      r.weighted<unknown>([
        [3, () => ({})],
        [2, () => ({ reason: r.string(20), builderid: r.pick([4, '4', -1, 1e20, null, [4]]) })],
        [1, () => ({ builderNames: r.pick([['runtests'], 'runtests', [1, 2], []]), username: r.string(10) })],
        [1, () => ({ __proto__: { owner: 'admin' }, owner: 'admin', constructor: { prototype: {} } })],
        [1, () => r.pick([[], 'x', 5, null, true])],
        [1, () => ({ mode: r.string(5), attempt: r.pick(['1', 'x', 1.5, -1]), notes: r.string(50) })],
      ]);
    const body = r.weighted<string | Buffer>([
      [
        6,
        () =>
          JSON.stringify({
            jsonrpc: r.chance(0.9) ? '2.0' : r.pick(['1.0', 2, null]),
            method: r.chance(0.9) ? r.pick(METHODS) : r.pick([1, null, ['stop']]),
            id: r.pick([1, 'a', null, 1.5, true, {}, [1]]),
            params: params(),
          }),
      ],
      [1, () => JSON.stringify([{ jsonrpc: '2.0', method: 'stop', id: 1, params: {} }])],
      [1, () => r.pick(['', '{', 'null', '"x"', '1e999999', '{"a":1}{', '\u0000', '{"jsonrpc":"2.0"'])],
      [1, () => `${'['.repeat(5000)}${']'.repeat(5000)}`],
      [1, () => r.bytes(r.int(200))],
      [1, () => `{"jsonrpc":"2.0","method":"stop","id":1,"params":{${'"k":1,'.repeat(r.int(2000))}"z":0}}`],
    ]);
    return { body: Buffer.isBuffer(body) ? body : Buffer.from(body), ctype };
  }

  private jwtGarbage(): string {
    const r = this.r;
    return r.weighted<string>([
      [
        2,
        () =>
          `${b64({ alg: r.pick(['RS256', 'none', 'HS256', 'ES256', 'EdDSA', 'xx']), kid: r.string(5) })}.${b64({ iss: 'https://idp.example.org', aud: 'flotilla', sub: 'x', exp: 9e9 })}.${b64(r.bytes(r.int(300)))}`,
      ],
      [1, () => r.string(60, 'abcdefghijklmnopqrstuvwxyz0123456789-_.')],
      [1, () => encodeURIComponent(r.string(30))],
      [1, () => ''],
    ]);
  }

  /** One request of phase A: nothing in it may change the database. */
  next(): FuzzRequest {
    const r = this.r;
    return r.weighted<FuzzRequest>([
      [
        40,
        () => {
          const path = `/api/v2${this.apiPath()}${this.query()}`;
          const method = r.chance(0.8) ? 'GET' : 'HEAD';
          return { kind: 'http', method, path, headers: this.headers(), what: 'read' };
        },
      ],
      [
        18,
        () => {
          const { body, ctype } = this.rpcBody();
          const headers = this.headers();
          if (ctype !== undefined) headers['content-type'] = ctype;
          const path = `/api/v2${r.chance(0.6) ? r.pick(CONTROL_PATHS) : this.apiPath()}`;
          return { kind: 'http', method: 'POST', path, headers, body, what: 'json-rpc' };
        },
      ],
      [
        9,
        () => {
          const headers = this.headers();
          const q = r.weighted<string>([
            [3, () => ''],
            [2, () => `?token=${this.jwtGarbage()}`],
            [2, () => `?redirect=${this.token()}${r.pick(['', '%0D%0ALocation:%20x', '%E2%80%A8', '#x'])}`],
            [1, () => this.query()],
          ]);
          if (r.chance(0.6)) {
            const user = r.pick(['fuzzer', 'admin', 'nobody', r.string(10), '', ':', 'a'.repeat(300)]);
            headers.authorization = r.weighted<string>([
              [4, () => `Basic ${Buffer.from(`${user}:${r.string(12)}`).toString('base64')}`],
              [1, () => `Basic ${r.string(20, 'ABC=+/!')}`],
              [1, () => `Bearer ${this.jwtGarbage()}`],
              [1, () => r.string(30, 'abc ')],
            ]);
          }
          const path = r.pick([
            '/auth/login',
            '/auth/login',
            '/auth/logout',
            '/config',
            '/auth/',
            '/auth/nosuch',
          ]);
          return {
            kind: 'http',
            method: r.chance(0.9) ? 'GET' : 'HEAD',
            path: `${path}${q}`,
            headers,
            what: 'auth',
          };
        },
      ],
      [
        7,
        () => {
          const path = r.pick([
            '/',
            '/api',
            '/api/v3',
            '/healthz',
            '/readyz',
            '/metrics',
            '/ws',
            '/sse',
            '/sse/listen/builds/*/new',
            `/sse/add/${r.string(8, 'abc123-')}/builds`,
            '/change_hook/base',
            '/change_hook/github',
            '/avatar',
            `/${this.token()}`,
            '/..%2F..%2Fetc%2Fpasswd',
            '/api/v2/../../etc/passwd',
          ]);
          const method = r.pick([
            'GET',
            'GET',
            'HEAD',
            'POST',
            'OPTIONS',
            'PUT',
            'DELETE',
            'PATCH',
            'PROPFIND',
            'TRACE',
          ]);
          const headers = this.headers();
          let body: Buffer | undefined;
          if (method !== 'GET' && method !== 'HEAD' && r.chance(0.7)) {
            body = r.chance(0.5) ? Buffer.from(JSON.stringify({ x: r.string(20) })) : r.bytes(r.int(300));
            headers['content-type'] = r.pick([
              'application/json',
              'application/x-www-form-urlencoded',
              'text/plain',
            ]);
          }
          return { kind: 'http', method, path: `${path}${this.query()}`, headers, body, what: 'other' };
        },
      ],
      [
        6,
        () => {
          const method = r.pick(['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND', 'TRACE', 'MKCOL']);
          const headers = this.headers();
          const body = r.chance(0.5) ? r.bytes(r.int(500)) : undefined;
          const path = `/api/v2${this.apiPath()}`;
          return { kind: 'http', method, path, headers, body, what: 'method' };
        },
      ],
      [
        5,
        () =>
          r.weighted<FuzzRequest>([
            [
              2,
              () => ({
                kind: 'http',
                method: 'POST',
                path: '/api/v2/builds/2',
                headers: { 'content-type': 'application/json' },
                body: Buffer.alloc(1024 * 1024 + 1 + r.int(1024 * 1024), 0x20),
                what: 'big body',
              }),
            ],
            [
              2,
              () => ({
                kind: 'http',
                method: 'GET',
                path: `/api/v2/builders?name=${'x'.repeat(8200 + r.int(6000))}`,
                headers: {},
                what: 'long url',
              }),
            ],
            [
              2,
              () => ({
                kind: 'http',
                method: 'GET',
                path: '/api/v2/builders',
                headers: { 'x-big': 'y'.repeat(16 * 1024 + r.int(16 * 1024)) },
                what: 'big header',
              }),
            ],
            [
              1,
              () => ({
                kind: 'http',
                method: 'GET',
                path: '/api/v2/builders',
                headers: { cookie: `TWISTED_SESSION=${'z'.repeat(12000)}` },
                what: 'big cookie',
              }),
            ],
          ]),
      ],
      [3, () => this.raw()],
      [this.ctx.wsAvailable ? 3 : 1, () => this.ws()],
    ]);
  }

  private raw(): FuzzRequest {
    const r = this.r;
    const line = r.weighted<string | Buffer>([
      [2, () => `GET /api/v2/builders${r.string(10)} HTTP/1.1`],
      [1, () => `${r.string(6, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ')} /api/v2 HTTP/1.1`],
      [1, () => `GET /api/v2 HTTP/${r.pick(['0.9', '1.2', '2.0', '9', 'x'])}`],
      [1, () => r.bytes(r.int(100))],
      [1, () => `GET ${'/'.repeat(r.int(50))}\u0000 HTTP/1.1`],
    ]);
    const headers = r.weighted<string>([
      [2, () => 'Host: x\r\n'],
      [
        1,
        () => `Host: x\r\nContent-Length: ${r.pick(['-1', 'abc', '99999999999999999999', '1, 2', ' 5'])}\r\n`,
      ],
      [1, () => 'Host: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n'],
      [1, () => `Host: x\r\n${r.string(20)}\r\n`],
      [1, () => `Host: x\r\nX: ${r.string(20)}\r\nY\r\n`],
      [1, () => ''],
    ]);
    const tail = r.weighted<string | Buffer>([
      [2, () => ''],
      [1, () => 'ffff\r\nabc\r\n'],
      [1, () => r.bytes(r.int(100))],
    ]);
    const bytes = Buffer.concat([
      Buffer.isBuffer(line) ? line : Buffer.from(line),
      Buffer.from('\r\n'),
      Buffer.from(headers),
      Buffer.from('\r\n'),
      Buffer.isBuffer(tail) ? tail : Buffer.from(tail),
    ]);
    return { kind: 'raw', bytes, what: 'raw' };
  }

  private ws(): FuzzRequest {
    const r = this.r;
    const headers: Record<string, string> = {};
    const c = this.cookie();
    if (c !== undefined) headers.cookie = `TWISTED_SESSION=${c}`;
    const frames = Array.from({ length: 1 + r.int(6) }, () =>
      r.weighted<string | Buffer>([
        [
          3,
          () =>
            JSON.stringify({
              cmd: r.pick(['startConsuming', 'stopConsuming', 'ping', 'nosuch', '']),
              path: r.pick(['builds/*/*', '*', '', 'a/b/c/d/e/f/g', `logs/${r.int(10)}/lines`, this.token()]),
              _id: r.pick([1, 'x', null, -1]),
            }),
        ],
        [
          1,
          () =>
            JSON.stringify({ type: r.pick(['connection_init', 'start', 'stop', 'x']), id: '1', payload: {} }),
        ],
        [1, () => r.pick(['', '{', 'null', '[]', '"x"', '{"cmd":"ping"}'])],
        [1, () => r.bytes(r.int(200))],
        [1, () => r.string(100)],
      ]),
    );
    return { kind: 'ws', headers, frames, what: 'ws' };
  }

  /** A call of phase B (an administrator's: allowed actions, random arguments). */
  adminCall(): { path: string; body: Buffer } {
    const r = this.r;
    const path = `/api/v2${r.pick(CONTROL_PATHS)}`;
    const body = JSON.stringify({
      jsonrpc: '2.0',
      method: r.pick(METHODS),
      id: 1,
      params: r.weighted<Record<string, unknown>>([
        [3, () => ({})],
        [2, () => ({ reason: r.string(20), builderid: r.pick([4, 5, '4', -1, 1e20, null, [4], 99]) })],
        [1, () => ({ builderNames: r.pick([['runtests'], 'runtests', [1, 2], [], ['nosuch']]) })],
        [
          2,
          () => ({
            mode: r.pick(['pass', 'fail', r.string(5)]),
            attempt: r.pick(['1', 'x', 1.5, -1, 1e300]),
            notes: r.string(50),
          }),
        ],
        [
          1,
          () => ({
            sleep: r.pick(['0', '-1', 'x']),
            fail: r.pick(['no', 'yes', 'maybe']),
            verbose: r.pick([true, 'x', 1]),
          }),
        ],
        [1, () => ({ reason: null, owner: 'someone-else', __proto__: {} })],
      ]),
    });
    return { path, body: Buffer.from(body) };
  }
}
