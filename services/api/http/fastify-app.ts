// The API pod's Fastify instance before any part is added to it: Buildbot's exact paths, the
// size and time limits on what a client sends, and what Fastify refuses before it has a route,
// answered in our shapes. It opens nothing; listening is the process's (service.ts).
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { WwwConfig } from '../../core/config/master-config.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { notFound } from '../errors/catalogue.js';
import { clientError, errorHandler, frameworkErrors, sendError } from '../errors/reply.js';

// Larger requests are refused (body 413, headers 431, URL 414); `www.limits` overrides these.
const DEFAULT_LIMITS = { body_bytes: 1024 * 1024, header_bytes: 16 * 1024, url_bytes: 8 * 1024 };
// A request (headers and body) must arrive within this; slow senders are cut off.
const REQUEST_TIMEOUT_MS = 30_000;
const HEADERS_TIMEOUT_MS = 20_000;

export type Limits = typeof DEFAULT_LIMITS;

export function createFastify(opts: {
  log: Logger;
  www?: WwwConfig | undefined;
  bodyLimit?: number | undefined;
}): {
  app: FastifyInstance;
  limits: Limits;
} {
  const limits = { ...DEFAULT_LIMITS, ...opts.www?.limits };
  const app = Fastify({
    loggerInstance: opts.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // Buildbot matches paths exactly: /api/v2/builds/ is not /api/v2/builds.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 4096 },
    bodyLimit: opts.bodyLimit ?? limits.body_bytes,
    http: { maxHeaderSize: limits.header_bytes, headersTimeout: HEADERS_TIMEOUT_MS },
    requestTimeout: REQUEST_TIMEOUT_MS,
    trustProxy: (opts.www?.trust_proxy ?? false) as boolean,
    clientErrorHandler: clientError,
    // What Fastify refuses before it has a route, answered in our shapes.
    frameworkErrors,
    // While it stops (SIGTERM), a pod still answers what reaches it on connections already
    // open, as a proxy that has not yet seen the pod leave sends it: a 503 there would be a
    // failed request. New connections are refused, idle ones closed, and /readyz says 503.
    return503OnClosing: false,
  });
  // JSON-RPC bodies are decoded by the API itself, with Buildbot's error messages.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.setErrorHandler(errorHandler('api'));
  app.setNotFoundHandler((req, reply) => sendError(req, reply, notFound()));
  return { app, limits };
}
