// Change hooks on the API pods: POST /change_hook/<dialect> (and /change_hook, the base
// dialect) turns a notification into changes with addChange.
//
// Buildbot facts (buildbot/www/change_hook.py): a dialect not enabled is refused with 400
// "The dialect specified, '<name>', wasn't whitelisted in change_hook"; the changes are
// added one by one; the answer is 200, Content-Type text/html, body "<n> change found" (so
// even "2 change found") or "no change found"; a bad request is 400 with its message as the
// body. (Buildbot sets 202 after writing the body, too late: what is sent is 200.)
// Where we differ: only POST (Buildbot also takes GET, a write on a GET); the changes of one
// request are added in one transaction (all or none); a body over the limit is 413 and an
// unknown content type 415; a database failure is 500 "Error processing changes." as in
// Buildbot, and nothing a client sends can cause one. Every answer is text/plain, and a
// dialect that is not enabled is a 404 `not found`: Buildbot's text/html page quoting the
// dialect from the URL let a cross-site form POST run a script on the API's origin
// (docs/security.md, test/api/security/reflected-html.test.ts). The base hook asks for HTTP
// Basic credentials when change_hooks.base.auth is set (base-auth.ts: Buildbot's
// change_hook_auth, for this dialect); without it, the API warns at every start, since
// anyone who reaches it can add changes whose properties reach the builds' commands.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ChangeHooksConfig } from '../../core/config/master-config.js';
import { addChange, type DataContext, transact } from '../../core/data/index.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { RedisUnavailable } from '../auth/counters.js';
import { LoginThrottle } from '../auth/login-throttle.js';
import { hookUnauthorized, hookUnavailable, notFound, tooManyLogins } from '../errors/catalogue.js';
import { errorHandler } from '../errors/reply.js';
import { Deliveries } from './deliveries.js';
import { enabledDialects } from './dialects.js';

export interface ChangeHooksOptions {
  ctx: DataContext;
  /** The master configuration's change_hooks (absent: every dialect is refused). */
  config: ChangeHooksConfig | undefined;
  /** Where secret_env is looked up (default process.env). */
  env?: Record<string, string | undefined>;
  /** Prefix of the Redis keys of remembered GitHub deliveries (default `flotilla:`). */
  keyPrefix?: string;
  /** Largest body accepted, in bytes (default 1 MiB). */
  bodyLimit?: number;
  /** Where the start-up warnings go (the base hook without authentication). */
  log: Logger;
}

// Failed credentials a client may send the hooks in a window before it must wait (the web
// login's per-address default: services/api/http/logins.ts), and that window.
const HOOK_FAILURES_PER_CLIENT = 30;
const HOOK_FAILURE_WINDOW_SECONDS = 900;

const answer = (reply: FastifyReply, status: number, body: string) =>
  reply.code(status).type('text/plain; charset=utf-8').send(body);

export const changeHooks: FastifyPluginAsync<ChangeHooksOptions> = async (app, opts) => {
  const dialects = enabledDialects(opts.config, opts.env);
  if (dialects.base && !dialects.base.authorize)
    opts.log.warn(
      { dialect: 'base', setting: 'change_hooks.base.auth', docs: 'docs/security.md' },
      'change_hooks.base is enabled without authentication: anyone who can reach this API can add ' +
        "changes, and their properties reach the builds' shell commands; set change_hooks.base.auth " +
        '(or keep the hook behind a proxy that authenticates)',
    );
  const deliveries = new Deliveries(opts.ctx.redis, opts.keyPrefix ?? 'flotilla:');
  // A hook's credentials are guessed like a login's: failures are throttled per client
  // address with the login throttle's buckets (its default per-address burst and rate), in
  // keys of the hooks' own, so a guesser at the hook never touches a user's web logins.
  const guesses = new LoginThrottle(opts.ctx.redis, {
    maxFailuresPerUser: HOOK_FAILURES_PER_CLIENT,
    maxFailuresPerClient: HOOK_FAILURES_PER_CLIENT,
    maxFailuresPerUserGlobal: HOOK_FAILURES_PER_CLIENT,
    windowSeconds: HOOK_FAILURE_WINDOW_SECONDS,
    keyPrefix: `${opts.keyPrefix ?? 'flotilla:'}hook:`,
  });

  // Raw bytes for every content type: the GitHub signature is over the body as sent.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    '*',
    { parseAs: 'buffer', bodyLimit: opts.bodyLimit ?? 1024 * 1024 },
    (_r, b, done) => done(null, b),
  );
  // Refusals are thrown, and answered as text by the one mapper (../errors/reply.ts).
  app.setErrorHandler(errorHandler('hook'));

  const handle = async (req: FastifyRequest<{ Params: { dialect?: string } }>, reply: FastifyReply) => {
    const dialect = req.params.dialect || 'base';
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    // A dialect that is not enabled: like any path that names nothing, and naming nothing back.
    const handler = Object.hasOwn(dialects, dialect) ? dialects[dialect as keyof typeof dialects] : undefined;
    if (!handler) throw notFound();
    if (handler.authorize) {
      const attempt = { client: req.ip, username: null, device: null };
      const verdict = await guesses.begin(attempt).catch((err: unknown) => {
        // Credentials are never checked unthrottled.
        throw err instanceof RedisUnavailable ? hookUnavailable() : err;
      });
      if (!verdict.ok) {
        reply.header('retry-after', String(verdict.retryAfterSeconds));
        throw tooManyLogins(verdict.retryAfterSeconds);
      }
      if (!handler.authorize(req)) {
        if (handler.challenge) reply.header('www-authenticate', handler.challenge);
        throw hookUnauthorized();
      }
      await guesses.succeeded(attempt).catch(() => {});
    }
    const changes = await handler.changes(req, body);
    if (changes.length === 0) return answer(reply, 200, 'no change found');
    const delivery = handler.delivery?.(req);
    if (handler.delivery) {
      let first: boolean;
      try {
        first = await deliveries.claim(delivery, body);
      } catch (err) {
        // A replay is never let through unchecked.
        throw err instanceof RedisUnavailable ? hookUnavailable() : err;
      }
      if (!first) {
        req.log.warn({ dialect, delivery: delivery?.slice(0, 64) }, 'a delivery came again: no change made');
        return answer(reply, 200, 'no change found');
      }
    }
    const ids = await transact(opts.ctx, async (tx) => {
      const added: number[] = [];
      for (const c of changes) added.push(await addChange(tx, c));
      return added;
    }).catch(async (err: unknown) => {
      if (handler.delivery) await deliveries.release(delivery, body);
      throw err;
    });
    req.log.info(
      { dialect, changeids: ids, authenticated: handler.authorize !== undefined },
      'changes added from a web hook',
    );
    return answer(reply, 200, `${changes.length} change found`);
  };
  app.post('/change_hook', handle);
  app.post('/change_hook/:dialect', handle);
};
