// /api/v2: Buildbot's REST API. GET and HEAD read (one path through the registry, the query
// engine and the envelope), POST is JSON-RPC control, OPTIONS a CORS preflight, anything
// else a 400, as Buildbot answers.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Authorizer } from '../auth/authorizer.js';
import type { SessionCookies } from '../auth/session-cookies.js';
import type { PageCache } from '../cache/page-cache.js';
import type { RowReader } from '../db-routing/read-pool.js';
import { badMethod, forbidden, notFound } from '../errors/catalogue.js';
import { renderEnvelope, wantsJson } from '../query/envelope.js';
import { groupArgs, parseResultSpec } from '../query/parse.js';
import { PreparedReads, prepareRows, readPrepared, readProperties } from '../query/run.js';
import type { ArtifactReader } from '../read/artifacts.js';
import type { LogReader } from '../read/logs.js';
import { pageKeys } from '../read/page-keys.js';
import type { Registry } from '../registry/index.js';
import type { Match } from '../registry/paths.js';
import { etagOf, sendRendered } from '../reply/etag.js';
import { type CorsPolicy, checkCors } from './cors.js';
import { setMetricsRoute } from './metrics.js';

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

/** The endpoints whose answers the page cache may keep (downloads stream, and are not). */
const CACHED_KINDS = new Set(['rows', 'properties', 'logchunk']);

function nextLink(req: FastifyRequest, offset: number, limit: number): string {
  const url = new URL(req.raw.url ?? '/', 'http://x');
  url.searchParams.set('offset', String(offset + limit));
  return `<${url.pathname}${url.search}>; rel="next"`;
}

export function restHandler(deps: RestDeps) {
  const prepared = new PreparedReads();
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
    const qAt = url.indexOf('?');
    const rawPath = (qAt < 0 ? url : url.slice(0, qAt)).slice('/api/v2'.length);
    const query = qAt < 0 ? '' : url.slice(qAt + 1);
    const segments = pathSegments(rawPath);
    const match = segments ? deps.registry.matcher.match(segments) : null;
    if (match) setMetricsRoute(req, `/api/v2/${match.endpoint.pattern}`);

    if (req.method === 'POST') {
      deps.sessions.attach(req, reply);
      return await deps.jsonRpc(req, reply, match, segments);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') throw badMethod();
    // As Buildbot: authorization comes before the endpoint is looked up, so a refused user
    // learns nothing of what exists. HEAD is a read, like GET.
    if (!deps.authz.open) {
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
    if (!match || match.endpoint.noGet) throw notFound();
    deps.sessions.attach(req, reply);

    const { endpoint, args } = match;
    const pages = CACHED_KINDS.has(endpoint.kind) ? deps.pages : null;
    const pageKey = pages ? `${wantsJson(req.headers.accept) ? 'j' : 't'}${url}` : undefined;
    const kept = pageKey ? await pages!.lookup(pageKey) : null;
    if (kept) {
      if (kept.link) reply.header('link', kept.link);
      return sendRendered(req, reply, kept, kept.etag);
    }
    const rows =
      endpoint.kind === 'rows'
        ? prepared.get(url, () =>
            prepareRows(
              deps.registry,
              endpoint,
              args,
              segments!,
              parseResultSpec(groupArgs(query), endpoint.resource.fields, endpoint.collection),
            ),
          )
        : null;
    const spec =
      rows?.spec ?? parseResultSpec(groupArgs(query), endpoint.resource.fields, endpoint.collection);
    switch (endpoint.kind) {
      case 'rows':
      case 'properties':
      case 'logchunk': {
        const versions = pages ? await pages.versions.get() : null;
        // Before the read: a write the page might miss is then noticed after this mark.
        const mark = pages?.mark() ?? -1;
        // Compact JSON is read as PostgreSQL writes it (the text form, query/compile.ts).
        const read = rows?.text && wantsJson(req.headers.accept) ? rows.text : rows;
        const { env, stamp, pathIds } = read
          ? await readPrepared(deps.reads, endpoint, read, versions)
          : endpoint.kind === 'properties'
            ? await readProperties(deps.reads, endpoint, args, versions)
            : await deps.logs.contents(endpoint, args, spec, versions);
        let link: string | null = null;
        if (endpoint.collection && spec.limit && env.total !== null) {
          const offset = spec.offset ?? 0;
          if (offset + spec.limit < env.total) {
            link = rows?.next ?? nextLink(req, offset, spec.limit);
            if (rows) rows.next = link;
          }
        }
        const rendered = renderEnvelope(env, req.headers.accept);
        const bytes = Buffer.from(rendered.body);
        const etag = etagOf(bytes);
        if (pageKey && stamp) {
          const keys = pageKeys(endpoint, args, spec, stamp.tables, env, pathIds);
          pages!.store(pageKey, { ...stamp, keys, ...rendered, etag, link, mark });
        }
        if (link) reply.header('link', link);
        return sendRendered(req, reply, rendered, etag, bytes);
      }
      case 'raw-log':
        return await deps.logs.raw(req, reply, endpoint, args);
      case 'build-data-value':
        return await deps.logs.buildDataValue(req, reply, endpoint, args);
      case 'artifact-raw':
        return await deps.artifacts.raw(req, reply, endpoint, args);
    }
  };
}
