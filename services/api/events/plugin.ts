// The event endpoints of an API pod: /ws and /sse. One EventHub per pod subscribes to the
// event bus on a connection of its own and fans events out to this pod's clients.
//
//   await app.register(eventsPlugin, { redis, authorize, userInfo });
//
// `authorize(userInfo, routingKey)` decides, for every event and every client, whether the
// client's user may receive it (default: everyone may), at once or through a promise the
// event waits for; `userInfo(req)` says who the client
// is, once, when it connects (default: req.userInfo as the session cookies set it, else
// anonymous). See README.md for what this adds to Buildbot.

import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { ANONYMOUS } from '../auth/session-cookies.js';
import { badOrigin, tooManyConnections } from '../errors/catalogue.js';
import { sendError } from '../errors/reply.js';
import { ConnectionCounter } from './connections.js';
import { EventHub } from './hub.js';
import { SseRouter } from './sse.js';
import type { Authorize, UserInfo } from './types.js';
import { WsConsumer } from './ws.js';

export type { Authorize, UserInfo } from './types.js';

export interface EventsOptions {
  /** Commands: the event stream (resume), log tails, SSE stream owners. */
  redis: Redis;
  /** The connection that SUBSCRIBEs; default: a duplicate of `redis`. Closed with the app. */
  subscriber?: Redis;
  authorize?: Authorize;
  userInfo?: (req: FastifyRequest) => UserInfo | Promise<UserInfo>;
  /** Default 30 s. */
  pingIntervalMs?: number;
  /** Default 8 MiB. */
  maxBufferedBytes?: number;
  /** Per connection; default 1000. */
  maxSubscriptions?: number;
  /** Of which `logs/<id>/lines`, per connection; default 10. */
  maxLogSubscriptions?: number;
  /** Open /ws connections and SSE streams per client on this pod; default 20. */
  maxConnectionsPerClient?: number;
  /** Who a client is, for counting its connections (default: its address). */
  clientKey?: (req: FastifyRequest) => string;
  /** Whether a logged-in client's session still counts; checked every sessionCheckIntervalMs (10 s). */
  sessionAlive?: (sessionId: string, user: UserInfo) => Promise<boolean>;
  sessionCheckIntervalMs?: number;
  /** Whether a page of this Origin may connect (default: any); others get 400 `invalid origin`. */
  allowOrigin?: (origin: string) => boolean;
  /** Default 100 ms. */
  logLinesIntervalMs?: number;
  /** The largest frame a client may send; default 64 KiB. */
  maxFrameBytes?: number;
  /** Receives the pod's hub (tests, metrics). */
  onHub?: (hub: EventHub) => void;
}

/**
 * An authorize() that throws or rejects denies (and is logged): one bad call must not stop
 * the fan-out, and an event nobody could decide about is withheld.
 */
function guarded(authorize: Authorize, log: FastifyInstance['log']): Authorize {
  const failed = (err: unknown, key: readonly string[]) => {
    log.error({ err: (err as Error).message, key: key.join('/') }, 'authorize failed; event withheld');
    return false;
  };
  return (user, key) => {
    try {
      const d = authorize(user, key);
      return typeof d === 'boolean'
        ? d
        : d.then(
            (ok) => ok === true,
            (err) => failed(err, key),
          );
    } catch (err) {
      return failed(err, key);
    }
  };
}
const allowAll: Authorize = () => true;
const sessionUser = (req: FastifyRequest): UserInfo => req.userInfo ?? ANONYMOUS;

export async function eventsPlugin(app: FastifyInstance, opts: EventsOptions): Promise<void> {
  const hub = new EventHub(
    opts.redis,
    opts.subscriber ?? opts.redis.duplicate({ connectionName: 'flotilla-api-events' }),
    {
      authorize: guarded(opts.authorize ?? allowAll, app.log),
      pingIntervalMs: opts.pingIntervalMs ?? 30_000,
      maxBufferedBytes: opts.maxBufferedBytes ?? 8 * 1024 * 1024,
      maxSubscriptions: opts.maxSubscriptions ?? 1000,
      maxLogSubscriptions: opts.maxLogSubscriptions ?? 10,
      logLinesIntervalMs: opts.logLinesIntervalMs ?? 100,
      ...(opts.sessionAlive ? { sessionAlive: opts.sessionAlive } : {}),
      sessionCheckIntervalMs: opts.sessionCheckIntervalMs ?? 10_000,
    },
    app.log,
  );
  hub.start();
  opts.onHub?.(hub);
  const connections = new ConnectionCounter(opts.maxConnectionsPerClient ?? 20);
  const clientKey = opts.clientKey ?? ((req: FastifyRequest) => req.ip);
  /** Counts a long-lived connection against its client until its socket closes; false: refused. */
  const admit = (req: FastifyRequest): boolean => {
    const release = connections.admit(clientKey(req));
    if (!release) return false;
    req.raw.socket.once('close', release);
    return true;
  };
  const sse = new SseRouter(hub, admit);
  const resolveUser = opts.userInfo ?? sessionUser;
  const users = new WeakMap<FastifyRequest, UserInfo>();

  // Before @fastify/websocket's own, which would close sockets without a status code.
  app.addHook('preClose', async () => {
    for (const c of [...hub.consumers]) {
      if (c instanceof WsConsumer) c.close(1001, 'server shutting down');
    }
    for (const s of sse.streams()) s.close();
  });
  app.addHook('onClose', async () => hub.stop());

  await app.register(websocket, {
    options: {
      maxPayload: opts.maxFrameBytes ?? 64 * 1024,
      // Buildbot does not require graphql-ws, but acknowledges it when offered.
      handleProtocols: (protocols: Set<string>) => (protocols.has('graphql-ws') ? 'graphql-ws' : false),
    },
  });
  app.addHook('preHandler', async (req, reply) => {
    // A page of a foreign origin is refused here as REST refuses it: cookies go with a
    // cross-site websocket (Buildbot's /ws ignores Origin).
    const origin = req.headers.origin;
    if (origin !== undefined && opts.allowOrigin && !opts.allowOrigin(origin)) {
      return sendError(req, reply, badOrigin());
    }
    users.set(req, await resolveUser(req));
    if (req.ws && !admit(req)) return sendError(req, reply, tooManyConnections());
  });

  app.route({
    method: 'GET',
    url: '/ws',
    handler: async (_req: FastifyRequest, reply: FastifyReply) =>
      reply
        .code(426)
        .header('upgrade', 'websocket')
        .type('text/plain; charset=utf-8')
        .send('this is a websocket endpoint'),
    wsHandler: (socket, req) => {
      const q = (req.query as Record<string, unknown> | undefined)?.last_event_id;
      const c = new WsConsumer(
        hub,
        users.get(req) ?? ANONYMOUS,
        socket,
        typeof q === 'string' && q !== '' ? q : null,
      );
      c.sessionId = req.sessionId ?? null;
    },
  });
  const sseHandler = (req: FastifyRequest, reply: FastifyReply) =>
    sse.handle(req, reply, users.get(req) ?? ANONYMOUS);
  // No HEAD: a stream answers nothing useful to it.
  for (const url of ['/sse', '/sse/*']) {
    app.route({ method: ['GET', 'POST'], url, handler: sseHandler, exposeHeadRoute: false });
  }
}
