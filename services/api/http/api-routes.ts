// The API's own routes: /api (which versions there are) and /api/v2, every method of every
// path below it, served by the REST handler (reads, and JSON-RPC actions on POST). With read
// replicas, a write's position goes back to its client and the client's next reads wait for it.
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { UserDirectory } from '../../core/auth/users.js';
import type { ConnectionPool } from '../../core/db/pool.js';
import type { ForceScheduler } from '../../core/force/parameters.js';
import type { ObjectStore } from '../../core/objstore/client.js';
import type { Logger } from '../../core/telemetry/logger.js';
import type { Authorizer } from '../auth/authorizer.js';
import type { SessionCookies } from '../auth/session-cookies.js';
import type { PageCache } from '../cache/page-cache.js';
import { Auditor } from '../control/audit.js';
import { controlHandlers } from '../control/index.js';
import type { RowReader } from '../db-routing/read-pool.js';
import { sendWritePositions, withWritePosition } from '../db-routing/read-your-writes.js';
import type { ReadRouter } from '../db-routing/replicas.js';
import { ArtifactReader } from '../read/artifacts.js';
import { LogReader } from '../read/logs.js';
import { ObjectSpans } from '../read/object-spans.js';
import type { RawLogCache } from '../read/raw-log-cache.js';
import type { Registry } from '../registry/index.js';
import type { CorsPolicy } from './cors.js';
import { jsonRpcHandler } from './jsonrpc.js';
import { restHandler } from './rest.js';
import { tokenRequests } from './token-requests.js';

const API_METHODS = ['GET', 'HEAD', 'POST', 'OPTIONS', 'PUT', 'DELETE', 'PATCH'] as const;

export function apiRoutes(
  app: FastifyInstance,
  opts: {
    publicUrl: string;
    db: ConnectionPool;
    redis: Redis;
    log: Logger;
    registry: Registry;
    /** Where the REST API's reads go (a replica, or the primary's read path). */
    reads: RowReader;
    /** The primary's read path: what control actions read. */
    primaryReads: RowReader;
    router: ReadRouter | null;
    pages: PageCache | null;
    rawLogs: RawLogCache | null;
    objectStore: ObjectStore | null;
    /** What the log reader keeps of moved logs (read/object-spans.ts); absent: its default. */
    objectSpansBytes?: number | undefined;
    cors: CorsPolicy;
    cookies: SessionCookies;
    secure: boolean;
    authz: Authorizer;
    forceByName: ReadonlyMap<string, ForceScheduler>;
    /** The users who log in with a password (a password user's token acts as their entry). */
    users: UserDirectory | null;
  },
): void {
  const base = new URL(opts.publicUrl);
  app.get('/api', async (_req, reply) =>
    reply
      .type('application/json')
      .send(JSON.stringify({ api_versions: { v2: new URL('api/v2', base).toString() } })),
  );
  const auditor = new Auditor(opts.db, opts.log);
  const rest = restHandler({
    reads: opts.reads,
    registry: opts.registry,
    cors: opts.cors,
    sessions: opts.cookies,
    authz: opts.authz,
    logs: new LogReader(
      opts.reads,
      opts.db,
      opts.redis,
      opts.rawLogs,
      opts.objectStore,
      new ObjectSpans(opts.objectSpansBytes),
    ),
    artifacts: new ArtifactReader(opts.reads, opts.objectStore),
    pages: opts.pages,
    jsonRpc: jsonRpcHandler(
      controlHandlers({
        db: opts.db,
        reads: opts.primaryReads,
        redis: opts.redis,
        forceSchedulers: opts.forceByName,
        onPublishError: (err) => opts.log.warn({ err: err.message }, 'events not published'),
      }),
      opts.authz,
      auditor,
    ),
    tokens: tokenRequests({ db: opts.db, authz: opts.authz, users: opts.users, auditor }),
  });
  if (opts.router) sendWritePositions(app, opts.db, opts.secure, opts.log);
  const api = opts.router ? withWritePosition(opts.router, rest) : rest;
  app.route({ method: [...API_METHODS], url: '/api/v2', handler: api });
  app.route({ method: [...API_METHODS], url: '/api/v2/*', handler: api });
}
