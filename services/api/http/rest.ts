// /api/v2: Buildbot's REST API. GET and HEAD read: match, authorize, read (../read/page.ts,
// which owns the page cache's part; downloads stream from read/logs.ts and artifacts.ts),
// send. POST is JSON-RPC control, OPTIONS a CORS preflight, anything else a 400, as Buildbot
// answers.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Authorizer } from '../auth/authorizer.js';
import type { SessionCookies } from '../auth/session-cookies.js';
import type { PageCache } from '../cache/page-cache.js';
import type { RowReader } from '../db-routing/read-pool.js';
import { badMethod, forbidden, notFound } from '../errors/catalogue.js';
import { groupArgs, parseResultSpec } from '../query/parse.js';
import type { ArtifactReader } from '../read/artifacts.js';
import type { LogReader } from '../read/logs.js';
import { isPage, PageReader } from '../read/page.js';
import type { Registry } from '../registry/index.js';
import type { Match } from '../registry/paths.js';
import { sendRendered } from '../reply/etag.js';
import { type CorsPolicy, checkCors } from './cors.js';
import { setMetricsRoute } from './metrics.js';
import { TOKENS_ROOT } from './token-requests.js';

export interface RestDeps {
  reads: RowReader;
  registry: Registry;
  cors: CorsPolicy;
  sessions: SessionCookies;
  authz: Authorizer;
  logs: LogReader;
  artifacts: ArtifactReader;
  /** Rendered pages kept while their tables are unchanged; null when turned off. */
  pages: PageCache | null;
  jsonRpc: (
    req: FastifyRequest,
    reply: FastifyReply,
    match: Match | null,
    segments: string[] | null,
  ) => Promise<void>;
  /** /api/v2/tokens: the user's own API tokens (./token-requests.ts), outside the registry. */
  tokens: (req: FastifyRequest, reply: FastifyReply, segments: readonly string[]) => Promise<void>;
}

/** The path below /api/v2 as decoded segments; null when it cannot name anything. */
export function pathSegments(rawPath: string): string[] | null {
  if (rawPath === '' || rawPath === '/') return rawPath === '' ? [] : null;
  if (!rawPath.startsWith('/')) return null;
  try {
    return rawPath
      .slice(1)
      .split('/')
      .map((s) => decodeURIComponent(s));
  } catch {
    return null;
  }
}

/** The request's path below /api/v2 and query, and the endpoint they name (null: none). */
function matchRequest(registry: Registry, url: string) {
  const qAt = url.indexOf('?');
  const rawPath = (qAt < 0 ? url : url.slice(0, qAt)).slice('/api/v2'.length);
  const query = qAt < 0 ? '' : url.slice(qAt + 1);
  const segments = pathSegments(rawPath);
  const match = segments ? registry.matcher.match(segments) : null;
  return { query, segments, match };
}

/**
 * As Buildbot: authorization comes before the endpoint is looked up, so a refused user
 * learns nothing of what exists. HEAD is a read, like GET.
 */
async function authorizeRead(
  deps: RestDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  segments: string[] | null,
  match: Match | null,
): Promise<void> {
  if (deps.authz.open) return;
  const decision = await deps.authz.check(deps.sessions.peek(req), {
    segments,
    action: 'get',
    params: {},
    match: match && !match.endpoint.noGet ? match : null,
  });
  if (!decision.allowed) {
    deps.sessions.attach(req, reply);
    throw forbidden(decision.message);
  }
}

export function restHandler(deps: RestDeps) {
  const pages = new PageReader(deps);
  // Errors are thrown, and answered by the app's error handler (../errors/reply.ts).
  return async (req: FastifyRequest, reply: FastifyReply) => {
    // Once rules decide who may read what, an answer is for the one who asked: no shared
    // cache may keep it for someone else (the session cookie or a token decides).
    if (!deps.authz.open) reply.header('cache-control', 'private').header('vary', 'Cookie, Authorization');
    if (!checkCors(deps.cors, req, reply)) return reply;
    // OPTIONS is only a CORS preflight (checkCors answered the headers); without Origin it is
    // just another method Buildbot refuses.
    if (req.method === 'OPTIONS') {
      if (!req.headers.origin) throw badMethod();
      // Buildbot's preflight carries Twisted's default type, text/html, and no body.
      return reply.code(200).type('text/html').send('');
    }
    const url = req.raw.url ?? '';
    const { query, segments, match } = matchRequest(deps.registry, url);
    if (match) setMetricsRoute(req, `/api/v2/${match.endpoint.pattern}`);
    if (segments?.[0] === TOKENS_ROOT) {
      setMetricsRoute(req, `/api/v2/${TOKENS_ROOT}`);
      // Its answers are for the one who asked, and set no cookie but a login's own.
      reply.header('cache-control', 'private').header('vary', 'Cookie, Authorization');
      deps.sessions.attach(req, reply);
      return await deps.tokens(req, reply, segments);
    }
    if (req.method === 'POST') {
      deps.sessions.attach(req, reply);
      return await deps.jsonRpc(req, reply, match, segments);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') throw badMethod();

    await authorizeRead(deps, req, reply, segments, match);
    if (!match || match.endpoint.noGet) throw notFound();
    deps.sessions.attach(req, reply);

    const { endpoint, args } = match;
    if (isPage(endpoint.kind)) {
      const page = await pages.read({ match, segments: segments!, url, query, accept: req.headers.accept });
      if (page.link) reply.header('link', page.link);
      return sendRendered(req, reply, page, page.etag, page.encoded);
    }
    // A download's query must parse as a page's does (a 400 otherwise), though it reads none.
    parseResultSpec(groupArgs(query), endpoint.resource.fields, endpoint.collection);
    switch (endpoint.kind) {
      case 'raw-log':
        return await deps.logs.raw(req, reply, endpoint, args);
      case 'build-data-value':
        return await deps.logs.buildDataValue(req, reply, endpoint, args);
      case 'artifact-raw':
        return await deps.artifacts.raw(req, reply, endpoint, args);
    }
  };
}
