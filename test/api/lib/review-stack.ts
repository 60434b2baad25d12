// The stack the hostile review attacked (review.yaml), built (test/helpers/api.ts) as
// services/api/service.ts builds an API pod: the configuration's force schedulers, auth and www, the change hooks, on a
// fresh copy of the fixture, with a Redis key prefix of its own. Requests go through
// Fastify's inject (they can say which address they come from) or, once listen() was
// called, over real sockets.
import { randomBytes } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { changeHooks } from '../../../services/api/hooks/index.js';
import { loadMasterConfig, type MasterConfig } from '../../../services/core/config/master-config.js';
import { sql } from '../../../services/core/db/pool.js';
import { forceScheduler } from '../../../services/core/force/parameters.js';
import { createRedis, type Redis } from '../../../services/core/redis.js';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import { apiInProcess, listenOn } from '../../helpers/api.js';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';
import { testEnv } from '../../helpers/env.js';
import { basic, InjectClient, type Reply, sessionOf } from '../auth/lib.js';

export { basic, type Reply, sessionOf };

export const REVIEW_YAML = resolve(dirname(fileURLToPath(import.meta.url)), 'review.yaml');
export const PUBLIC_URL = 'http://flotilla.test:8010/';
export const GITHUB_SECRET = 'review-github-secret';
export const PASSWORDS = { admin: 'admin-pw', dev: 'dev-pw', guest: 'guest-pw' } as const;
export type ReviewUser = keyof typeof PASSWORDS;

/** Fixture builder ids. */
export const BUILDERS = { build: 1, deploy: 2, package: 3, runtests: 4, flaky: 5 } as const;

export function reviewConfig(patch?: (c: MasterConfig) => void): MasterConfig {
  const c = loadMasterConfig(REVIEW_YAML);
  patch?.(c);
  return c;
}

export interface StackOptions {
  patch?: (c: MasterConfig) => void;
  db?: TestDatabase;
  redis?: Redis;
  keyPrefix?: string;
  /** Routes a later part of the pod would add (the web UI's files), before the app is ready. */
  beforeReady?: (app: FastifyInstance) => void;
}

export class ReviewStack extends InjectClient {
  private constructor(
    app: FastifyInstance,
    readonly config: MasterConfig,
    readonly db: TestDatabase,
    readonly redis: Redis,
    readonly keyPrefix: string,
    private readonly ownDb: boolean,
    private readonly ownRedis: boolean,
  ) {
    super(app);
  }

  static async start(opts: StackOptions = {}): Promise<ReviewStack> {
    const config = reviewConfig(opts.patch);
    const db = opts.db ?? (await createDatabase('fixture'));
    const redis = opts.redis ?? createRedis(testEnv().redisUrl, 'flotilla-review-test');
    redis.on('error', () => {});
    const keyPrefix = opts.keyPrefix ?? `sec:${randomBytes(6).toString('hex')}:`;
    const { app } = await apiInProcess({
      db,
      redis,
      publicUrl: PUBLIC_URL,
      forceSchedulers: config.force_schedulers.map(forceScheduler),
      auth: config.auth,
      www: config.www,
      title: config.title,
      redisKeyPrefix: keyPrefix,
      beforeReady: async (app) => {
        await app.register(changeHooks, {
          ctx: { db: db.pool, redis },
          config: config.change_hooks,
          env: { REVIEW_GITHUB_SECRET: GITHUB_SECRET },
          keyPrefix,
          log: createLogger('test', 'silent'),
        });
        opts.beforeReady?.(app);
      },
    });
    return new ReviewStack(app, config, db, redis, keyPrefix, !opts.db, !opts.redis);
  }

  /** Listens on a free loopback port; the base URL (http://127.0.0.1:<port>). */
  listen(): Promise<string> {
    return listenOn(this.app);
  }

  /** Logs in with HTTP Basic; the session cookie's value. */
  async login(user: ReviewUser, from?: string): Promise<string> {
    const a = await this.get('/auth/login', {
      headers: { authorization: basic(user, PASSWORDS[user]) },
      ...(from ? { from } : {}),
    });
    if (a.status !== 302) throw new Error(`login of ${user} answered ${a.status}: ${a.text}`);
    return sessionOf(a)!;
  }

  /** The number of build sets, to show that a refused action started nothing. */
  async buildsets(): Promise<number> {
    const [row] = await this.db.pool.query(sql`SELECT count(*)::int AS n FROM buildsets`);
    return row.n as number;
  }

  async close(): Promise<void> {
    await this.app.close();
    if (this.ownRedis) this.redis.disconnect();
    if (this.ownDb) await this.db.drop();
  }
}

/** What useReviewStack gives a file: set before its first test. */
export interface ReviewFile {
  stack: ReviewStack;
  /** The base URL when started with `listen` (real sockets), else ''. */
  base: string;
  /** A session cookie's value for each user of `login`. */
  sessions: Record<ReviewUser, string>;
}

/**
 * A review stack for the tests of one file: started before them (listening on a port, with
 * users logged in, when asked), closed after them.
 */
export function useReviewStack(opts: { listen?: boolean; login?: readonly ReviewUser[] } = {}): ReviewFile {
  const file = { base: '', sessions: { admin: '', dev: '', guest: '' } } as ReviewFile;
  beforeAll(async () => {
    file.stack = await ReviewStack.start();
    if (opts.listen) file.base = await file.stack.listen();
    for (const u of opts.login ?? []) file.sessions[u] = await file.stack.login(u);
  });
  afterAll(async () => {
    await file.stack?.close();
  });
  return file;
}
