// The oracle's API in process (test/helpers/api.ts's apiInProcess, with the force schedulers
// of the oracle's configuration), on a fresh database copied from a template, and reached
// through Fastify's inject: no port, no network, the real request path. This class adds the
// requests a test sends (request, get, rpc) and the database's lifetime.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../../services/api/http/server.js';
import { buildRegistry, type Registry } from '../../../services/api/registry/index.js';
import { loadMasterConfig } from '../../../services/core/config/master-config.js';
import {
  type ForceScheduler,
  forceScheduler,
  forceSchedulerSpec,
} from '../../../services/core/force/parameters.js';
import type { Redis } from '../../../services/core/redis.js';
import { apiInProcess } from '../../helpers/api.js';
import { createDatabase, type TEMPLATES, type TestDatabase } from '../../helpers/databases.js';

export const ORACLE_MASTER_YAML = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '../../conformance/oracle-master.yaml',
);
export const PUBLIC_URL = 'http://flotilla.test:8010/';
export const ORIGIN = 'http://flotilla.test:8010';
export const JSON_ACCEPT = { accept: 'application/json' } as const;

export function oracleForceSchedulers(): ForceScheduler[] {
  return loadMasterConfig(ORACLE_MASTER_YAML).force_schedulers.map(forceScheduler);
}

/** The registry the app serves, built the way buildApp builds it. */
export function oracleRegistry(): Registry {
  return buildRegistry(oracleForceSchedulers().map(forceSchedulerSpec));
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  /** The media type of Content-Type, lower case, without parameters ('' when absent). */
  mediaType: string;
  text: string;
  raw: Buffer;
  json<T = any>(): T;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  payload?: string | Buffer;
}

/** What a test may set of buildApp's deps (the rest are the harness's). */
export type AppOptions = Partial<
  Pick<AppDeps, 'bodyLimit' | 'allowedOrigins' | 'www' | 'readReplicas' | 'auth' | 'failAt'>
> & {
  redisUrl?: string;
};

export class ApiUnderTest {
  private constructor(
    readonly app: FastifyInstance,
    readonly db: TestDatabase,
    /** The API's own Redis connection (its event publisher is this connection's). */
    readonly redis: Redis,
    private readonly stopApi: () => Promise<void>,
  ) {}

  static async start(
    template: keyof typeof TEMPLATES = 'fixture',
    opts: AppOptions = {},
  ): Promise<ApiUnderTest> {
    const db = await createDatabase(template);
    try {
      return await ApiUnderTest.on(db, opts);
    } catch (err) {
      await db.drop();
      throw err;
    }
  }

  /** The API on a database the caller made (and drops, even when this rejects). */
  static async on(db: TestDatabase, opts: AppOptions = {}): Promise<ApiUnderTest> {
    const { redisUrl, ...deps } = opts;
    const api = await apiInProcess({
      db,
      ...(redisUrl ? { redis: redisUrl } : {}),
      publicUrl: PUBLIC_URL,
      forceSchedulers: oracleForceSchedulers(),
      ...deps,
    });
    return new ApiUnderTest(api.app, db, api.redis, api.stop);
  }

  /** `path` is relative to /api/v2 and keeps its query string, as in cases.json. */
  async request(method: string, path: string, opts: RequestOptions = {}): Promise<Answer> {
    return this.send(method, `/api/v2${path}`, opts.headers ?? {}, opts.payload);
  }

  /** Any request to any URL of the app (not only under /api/v2), as it is. */
  async send(
    method: string,
    url: string,
    headers: Record<string, string>,
    payload?: string | Buffer,
  ): Promise<Answer> {
    const res = await this.app.inject({
      method: method as 'GET',
      url,
      headers,
      ...(payload !== undefined ? { payload } : {}),
    });
    const ctype = res.headers['content-type'];
    return {
      status: res.statusCode,
      headers: res.headers,
      mediaType: typeof ctype === 'string' ? ctype.split(';')[0]!.trim().toLowerCase() : '',
      text: res.body,
      raw: res.rawPayload,
      json: () => JSON.parse(res.body),
    };
  }

  get(path: string, headers: Record<string, string> = JSON_ACCEPT): Promise<Answer> {
    return this.request('GET', path, { headers });
  }

  /** A JSON-RPC call as a client writes it. */
  rpc(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    return this.request('POST', path, {
      headers: { 'content-type': 'application/json', ...JSON_ACCEPT, ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  }

  /** Close the app and its Redis connection; the database stays (on(): the caller's). */
  stop(): Promise<void> {
    return this.stopApi();
  }

  async close(): Promise<void> {
    await this.stop();
    await this.db.drop();
  }
}

/** Rows of a collection answer, checked to be one: {<plural>: [...], meta: {total}}. */
export function collection<T = Record<string, unknown>>(
  a: Answer,
  plural: string,
): { rows: T[]; total: number } {
  if (a.status !== 200) throw new Error(`expected 200, got ${a.status}: ${a.text.slice(0, 300)}`);
  const body = a.json();
  const keys = Object.keys(body).sort();
  if (keys.join(',') !== [plural, 'meta'].sort().join(',')) {
    throw new Error(`expected keys ${plural}, meta; got ${keys.join(', ')}`);
  }
  return { rows: body[plural] as T[], total: body.meta.total as number };
}
