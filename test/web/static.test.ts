// The web UI's files as the API pods serve them: a real build of services/web into a
// folder of the test's, served by the route the API uses. Checks the CSP, the caching of
// index.html and of the hashed files, the encodings, and that nothing else is served.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadWebUi, webUiRoutes } from '../../services/api/http/web-ui.js';
import { securityHeaders } from '../../services/api/reply/security-headers.js';
import { type BuildReport, buildWebUi, JS_BUDGET_GZIP_BYTES } from '../../services/web/build.js';

let dir: string;
let app: FastifyInstance;
let report: BuildReport;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flotilla-web-'));
  report = await buildWebUi(dir);
  app = Fastify();
  // As the API pods install them: the one hook that sets every answer's security headers.
  securityHeaders(app);
  webUiRoutes(app, loadWebUi(dir)!);
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the web UI build', () => {
  it('stays within the first-load JavaScript budget', () => {
    expect(report.js).toHaveLength(1);
    expect(report.jsGzipBytes).toBeGreaterThan(1000);
    expect(report.jsGzipBytes).toBeLessThanOrEqual(JS_BUDGET_GZIP_BYTES);
  });

  it('names its files by their content', () => {
    expect(report.js[0]).toMatch(/^app-[A-Z0-9]{8}\.js$/);
    expect(report.css[0]).toMatch(/^app-[A-Z0-9]{8}\.css$/);
  });

  it('imports no server code: only types from core/api-shapes, and nothing else outside src', () => {
    const src = join('services', 'web', 'src');
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => /\.tsx?$/.test(f));
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) {
      const text = readFileSync(join(src, f), 'utf8');
      for (const m of text.matchAll(/^import\s+(type\s+)?[^'"]*from\s+'([^']+)'/gm)) {
        const [, typeOnly, spec] = m;
        if (!spec!.startsWith('.')) {
          expect(spec, `${f} imports ${spec}`).toMatch(/^preact(\/hooks)?$/);
          continue;
        }
        const depth = join(src, f, '..', spec!);
        if (depth.startsWith(src)) continue;
        expect(depth, `${f} imports ${spec}`).toBe(join('services', 'core', 'api-shapes.js'));
        expect(typeOnly, `${f} imports ${spec} for more than types`).toBeTruthy();
      }
    }
  });
});

describe('serving it', () => {
  it('serves index.html at / with a strict CSP, revalidated on every load', async () => {
    const res = await app.inject({ url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.body).toContain(`src="assets/${report.js[0]}"`);
    expect(res.body).not.toMatch(/<script>|<style>|https?:\/\//);
    const again = await app.inject({ url: '/', headers: { 'if-none-match': String(res.headers.etag) } });
    expect(again.statusCode).toBe(304);
  });

  it('serves the hashed files for a year, compressed as the client accepts', async () => {
    const url = `/assets/${report.js[0]}`;
    const plain = await app.inject({ url });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['content-encoding']).toBeUndefined();
    const br = await app.inject({ url, headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.rawPayload).equals(plain.rawPayload)).toBe(true);
    const gz = await app.inject({ url, headers: { 'accept-encoding': 'gzip, br;q=0' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).equals(plain.rawPayload)).toBe(true);
    const head = await app.inject({ method: 'HEAD', url });
    expect(head.statusCode).toBe(200);
    expect(Number(head.headers['content-length'])).toBe(plain.rawPayload.length);
  });

  it('answers 404 for any other name, and serves nothing beside the UI', async () => {
    for (const url of [
      '/assets/app.js',
      '/assets/../index.html',
      '/assets/index.html',
      '/index.html',
      '/build.json',
      '/assets/app-AAAAAAAA.js',
    ]) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(404);
    }
  });
});
