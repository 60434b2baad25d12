// The web UI's files (services/web, built by services/web/build.ts into services/web/dist):
// index.html at `/`, and the bundle's content-hashed files under `/assets/`. Nothing else:
// /api, /ws, /sse, /auth, /config, /change_hook and the probes keep their own routes, and
// every other path stays Buildbot's plain 404. The UI's own pages are hash routes
// (`/#/builders/1`, as Buildbot's), so a deep link or a reload always asks for `/`.
//
// index.html changes with every build and names the current hashes, so it is revalidated on
// every load (no-cache, with an ETag); a hashed file never changes under its name, so it is
// kept for a year (immutable). Files are read once at start (a few hundred KB) and sent
// precompressed (brotli or gzip, as the build wrote them) when the client accepts it.
//
// The headers every answer carries (nosniff, no framing, and for index.html, HTML, the strict
// Content-Security-Policy: this origin's scripts, styles and connections only, no inline
// script or style, no eval) come from ../reply/security-headers.ts, which covers this route too.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { etagOf, notModified } from '../reply/etag.js';

/** Where the build writes the UI; the same relative place from source and from dist/. */
export const DEFAULT_WEB_DIR = fileURLToPath(new URL('../../web/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};
const HASHED = /^[A-Za-z0-9_-]+-[A-Z0-9]{8,}\.[a-z0-9]+$/;

interface StaticFile {
  type: string;
  etag: string;
  identity: Buffer;
  br: Buffer | null;
  gzip: Buffer | null;
}

function load(path: string, type: string): StaticFile {
  const identity = readFileSync(path);
  const maybe = (p: string) => (existsSync(p) ? readFileSync(p) : null);
  return { type, etag: etagOf(identity), identity, br: maybe(`${path}.br`), gzip: maybe(`${path}.gz`) };
}

/** The encoding to send: brotli, then gzip, when the client names it without q=0. */
function pickEncoding(req: FastifyRequest, f: StaticFile): 'br' | 'gzip' | null {
  const accepted = new Set<string>();
  for (const part of String(req.headers['accept-encoding'] ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name || params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p))) continue;
    accepted.add(name);
  }
  if (f.br && accepted.has('br')) return 'br';
  if (f.gzip && accepted.has('gzip')) return 'gzip';
  return null;
}

function send(req: FastifyRequest, reply: FastifyReply, f: StaticFile, cacheControl: string): FastifyReply {
  reply
    .header('cache-control', cacheControl)
    .header('etag', f.etag)
    .header('vary', 'Accept-Encoding')
    .type(f.type);
  if (notModified(req, f.etag)) return reply.code(304).send();
  const enc = pickEncoding(req, f);
  const body = enc === 'br' ? f.br! : enc === 'gzip' ? f.gzip! : f.identity;
  if (enc) reply.header('content-encoding', enc);
  reply.header('content-length', body.length);
  return req.method === 'HEAD' ? reply.send() : reply.send(body);
}

export interface WebUiFiles {
  index: StaticFile;
  assets: Map<string, StaticFile>;
}

/** The built UI in `dir`, or null when it has not been built (the API then serves no UI). */
export function loadWebUi(dir: string = DEFAULT_WEB_DIR): WebUiFiles | null {
  const indexPath = join(dir, 'index.html');
  if (!existsSync(indexPath)) return null;
  const assets = new Map<string, StaticFile>();
  const assetDir = join(dir, 'assets');
  for (const name of existsSync(assetDir) ? readdirSync(assetDir) : []) {
    const type = TYPES[name.slice(name.lastIndexOf('.'))];
    if (!type || !HASHED.test(name)) continue;
    assets.set(name, load(join(assetDir, name), type));
  }
  return { index: load(indexPath, 'text/html; charset=utf-8'), assets };
}

export function webUiRoutes(app: FastifyInstance, files: WebUiFiles): void {
  const notFound = (reply: FastifyReply) =>
    reply.code(404).type('text/plain; charset=utf-8').send('not found');
  app.route({
    method: ['GET', 'HEAD'],
    url: '/',
    handler: (req, reply) => send(req, reply, files.index, 'no-cache'),
  });
  app.route({
    method: ['GET', 'HEAD'],
    url: '/assets/:name',
    handler: (req, reply) => {
      const f = files.assets.get((req.params as { name: string }).name);
      if (!f) return notFound(reply);
      return send(req, reply, f, 'public, max-age=31536000, immutable');
    },
  });
}
