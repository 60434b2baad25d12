// Headers every answer of an API pod carries, set in one place so that whatever a pod serves
// (REST, JSON-RPC, change hooks, /auth, events, probes, and the web UI's files) is covered,
// including routes added after this: nothing is sniffed into another type, nothing may be
// framed, and any HTML runs only the pod's own scripts and styles (no inline script, no
// eval, no other origin), so even a reflected string could not run.
import type { FastifyInstance } from 'fastify';

/** For every answer that is not HTML: it is data, nothing in it may run or load anything. */
export const DATA_POLICY =
  "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; sandbox";

/**
 * For HTML (the web UI): its own bundle, styles and images, its own API and events; no
 * inline script or style attribute, no eval, no plugins, no foreign form target, no framing.
 */
export const HTML_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const isHtml = (type: unknown) =>
  typeof type === 'string' && /^\s*(text\/html|application\/xhtml\+xml)\s*(;|$)/i.test(type);

/** Installs the headers on `app` (the root instance: its hooks reach every plugin). */
export function securityHeaders(app: FastifyInstance): void {
  // At the start, so that answers sent by hooks, errors and hijacked streams carry them too.
  app.addHook('onRequest', (_req, reply, done) => {
    reply
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', DATA_POLICY)
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer');
    done();
  });
  // The type is known only once the answer is: the pod's own HTML (the web UI) gets the
  // policy it can live with. HTML a build wrote (an html log, sent as an attachment, or
  // inline to be shown: Buildbot 4.3's raw_inline) keeps the sandbox: it runs nothing, on our
  // origin or any. Any answer with a disposition is such a file, never the pod's own page.
  app.addHook('onSend', (_req, reply, payload, done) => {
    const download = /^\s*(attachment|inline)/i.test(String(reply.getHeader('content-disposition') ?? ''));
    if (isHtml(reply.getHeader('content-type')) && !download)
      reply.header('content-security-policy', HTML_POLICY);
    done(null, payload);
  });
}
