// The API in-process (test/helpers/api.ts) with an auth configuration of the test's choosing, on a fresh copy of
// the fixture, reached through Fastify's inject (requests can say which address they come
// from). Each app has its own Redis key prefix, so suites never share counters.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { hashPassword } from '../../../services/core/auth/password.js';
import { masterConfigSchema } from '../../../services/core/config/master-config.js';
import { sql } from '../../../services/core/db/pool.js';
import { createRedis, type Redis } from '../../../services/core/redis.js';
import { apiInProcess } from '../../helpers/api.js';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';
import { testEnv } from '../../helpers/env.js';
import { oracleForceSchedulers, PUBLIC_URL } from '../lib/harness.js';

export { PUBLIC_URL };

/** Cheap hashes for tests (N = 1024); the scheme and the checks are the same. */
export async function testHash(password: string): Promise<string> {
  return hashPassword(password, { N: 1024, r: 8, p: 1 });
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
  json<T = any>(): T;
  /** The Set-Cookie headers. */
  cookies: string[];
}

export interface Req {
  headers?: Record<string, string>;
  payload?: string | Buffer;
  /** The client address (default 127.0.0.1). */
  from?: string;
  /** A session cookie value to send as TWISTED_SESSION. */
  session?: string;
}

/** Requests to an app through Fastify's inject, as a client at a chosen address sends them. */
export class InjectClient {
  constructor(readonly app: FastifyInstance) {}

  async request(method: string, url: string, r: Req = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...(r.headers ?? {}) };
    if (r.session !== undefined) {
      headers.cookie = headers.cookie
        ? `${headers.cookie}; TWISTED_SESSION=${r.session}`
        : `TWISTED_SESSION=${r.session}`;
    }
    const res = await this.app.inject({
      method: method as 'GET',
      url,
      headers,
      remoteAddress: r.from ?? '127.0.0.1',
      ...(r.payload !== undefined ? { payload: r.payload } : {}),
    });
    const sc = res.headers['set-cookie'];
    return {
      status: res.statusCode,
      headers: res.headers,
      text: res.body,
      json: () => JSON.parse(res.body),
      cookies: Array.isArray(sc) ? sc : sc ? [String(sc)] : [],
    };
  }

  get(url: string, r: Req = {}): Promise<Reply> {
    return this.request('GET', url, r);
  }

  /** A JSON-RPC call on /api/v2<path>. */
  rpc(path: string, method: string, params: Record<string, unknown> = {}, r: Req = {}): Promise<Reply> {
    return this.request('POST', `/api/v2${path}`, {
      ...r,
      headers: { 'content-type': 'application/json', ...(r.headers ?? {}) },
      payload: JSON.stringify({ jsonrpc: '2.0', method, id: 1, params }),
    });
  }
}

export class AuthApp extends InjectClient {
  private constructor(
    app: FastifyInstance,
    readonly db: TestDatabase,
    readonly redis: Redis,
    readonly keyPrefix: string,
    private readonly ownDb: boolean,
  ) {
    super(app);
  }

  /** `yaml` is a master configuration's auth/www sections, as a parsed object. */
  static async start(
    config: { auth?: unknown; www?: unknown },
    opts: {
      db?: TestDatabase;
      keyPrefix?: string;
      publicUrl?: string;
      redis?: Redis;
      sessionSecret?: string;
    } = {},
  ): Promise<AuthApp> {
    const parsed = masterConfigSchema.parse({ auth: config.auth ?? {}, www: config.www ?? {} });
    const db = opts.db ?? (await createDatabase('fixture'));
    const redis = opts.redis ?? createRedis(testEnv().redisUrl, 'flotilla-auth-test');
    redis.on('error', () => {});
    const keyPrefix = opts.keyPrefix ?? `t:${randomBytes(6).toString('hex')}:`;
    const { app } = await apiInProcess({
      db,
      redis,
      publicUrl: opts.publicUrl ?? PUBLIC_URL,
      forceSchedulers: oracleForceSchedulers(),
      auth: parsed.auth,
      www: config.www === undefined ? undefined : parsed.www,
      title: 'Auth test',
      redisKeyPrefix: keyPrefix,
      sessionSecret: opts.sessionSecret,
    });
    return new AuthApp(app, db, redis, keyPrefix, opts.db === undefined);
  }

  /** Logs in with HTTP Basic and returns the session cookie's value. */
  async login(username: string, password: string, from?: string): Promise<string> {
    const a = await this.get('/auth/login', { headers: { authorization: basic(username, password) }, from });
    if (a.status !== 302) throw new Error(`login of ${username} answered ${a.status}: ${a.text}`);
    return sessionOf(a)!;
  }

  async secret(): Promise<string> {
    const rows = await this.db.pool.query(sql`
      SELECT s.value_json FROM object_state s JOIN objects o ON o.id = s.objectid
      WHERE o.name = 'www' AND s.name = 'session_secret'`);
    return JSON.parse(rows[0].value_json);
  }

  async close(): Promise<void> {
    await this.app.close();
    this.redis.disconnect();
    if (this.ownDb) await this.db.drop();
  }
}

export function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/** The TWISTED_SESSION (or TWISTED_SECURE_SESSION) value an answer sets; undefined if none. */
export function sessionOf(a: Reply): string | undefined {
  for (const c of a.cookies) {
    const m = /^TWISTED_(?:SECURE_)?SESSION=([^;]*)/.exec(c);
    if (m) return m[1];
  }
  return undefined;
}

export function claimsOf(jwt: string): { user_info: Record<string, unknown>; exp: number } {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());
}
