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
import { addChange, type DataContext, type NewChange, transact } from '../../core/data/index.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { RedisUnavailable } from '../auth/counters.js';
import { hookInvalid, hookUnauthorized, hookUnavailable, notFound } from '../errors/catalogue.js';
import { errorHandler } from '../errors/reply.js';
import { baseChange } from './base.js';
import { BASE_AUTH_CHALLENGE, baseAuthCheck } from './base-auth.js';
import {
  FORM,
  formFields,
  JSON_TYPE,
  MULTIPART,
  mediaType,
  parseJson,
  queryFields,
  text,
  unsupportedType,
} from './body.js';
import { Deliveries } from './deliveries.js';
import { type GithubOptions, githubChanges } from './github.js';
import { hookSecret } from './secret.js';

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

/** The GitHub dialect's options, its secret read from where the configuration says. */
export function githubOptions(
  config: NonNullable<ChangeHooksConfig['github']>,
  env: Record<string, string | undefined> = process.env,
): GithubOptions {
  const secret = hookSecret(
    'change_hooks.github',
    { fromEnv: config.secret_env, fromFile: config.secret_file },
    env,
  );
  return { secret, codebase: config.codebase };
}

async function baseFields(req: FastifyRequest, body: Buffer): Promise<Map<string, unknown>> {
  const fields = new Map<string, unknown>(queryFields(req.url));
  const contentType = req.headers['content-type'];
  const type = mediaType(contentType);
  if (type === FORM || type === MULTIPART) {
    for (const [k, v] of await formFields(body, contentType!)) fields.set(k, v);
  } else if (type === JSON_TYPE) {
    const json = parseJson(text(body), 'the body');
    if (typeof json !== 'object' || json === null || Array.isArray(json))
      throw hookInvalid('the body must be a JSON object');
    for (const [k, v] of Object.entries(json)) fields.set(k, v);
  } else if (body.length > 0) {
    throw unsupportedType(contentType);
  }
  return fields;
}

const answer = (reply: FastifyReply, status: number, body: string) =>
  reply.code(status).type('text/plain; charset=utf-8').send(body);

export const changeHooks: FastifyPluginAsync<ChangeHooksOptions> = async (app, opts) => {
  const github = opts.config?.github ? githubOptions(opts.config.github, opts.env) : null;
  const baseEnabled = opts.config?.base?.enabled ?? false;
  const baseAuth = opts.config?.base?.auth
    ? baseAuthCheck(opts.config.base.auth, opts.env ?? process.env)
    : null;
  if (baseEnabled && !baseAuth)
    opts.log.warn(
      { dialect: 'base', setting: 'change_hooks.base.auth', docs: 'docs/security.md' },
      'change_hooks.base is enabled without authentication: anyone who can reach this API can add ' +
        "changes, and their properties reach the builds' shell commands; set change_hooks.base.auth " +
        '(or keep the hook behind a proxy that authenticates)',
    );
  const deliveries = new Deliveries(opts.ctx.redis, opts.keyPrefix ?? 'flotilla:');

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
    let changes: NewChange[];
    if (dialect === 'base' && baseEnabled) {
      if (baseAuth && !baseAuth(req.headers.authorization)) {
        reply.header('www-authenticate', BASE_AUTH_CHALLENGE);
        throw hookUnauthorized();
      }
      changes = [baseChange(await baseFields(req, body))];
    } else if (dialect === 'github' && github) changes = await githubChanges(body, req.headers, github);
    // A dialect that is not enabled: like any path that names nothing, and naming nothing back.
    else throw notFound();
    if (changes.length === 0) return answer(reply, 200, 'no change found');
    const delivery =
      typeof req.headers['x-github-delivery'] === 'string' ? req.headers['x-github-delivery'] : undefined;
    if (dialect === 'github') {
      let first: boolean;
      try {
        first = await deliveries.claim(delivery, body);
      } catch (err) {
        // A replay is never let through unchecked.
        throw err instanceof RedisUnavailable ? hookUnavailable() : err;
      }
      if (!first) {
        req.log.warn({ delivery: delivery?.slice(0, 64) }, 'a GitHub delivery came again: no change made');
        return answer(reply, 200, 'no change found');
      }
    }
    const ids = await transact(opts.ctx, async (tx) => {
      const added: number[] = [];
      for (const c of changes) added.push(await addChange(tx, c));
      return added;
    }).catch(async (err: unknown) => {
      if (dialect === 'github') await deliveries.release(delivery, body);
      throw err;
    });
    req.log.info(
      { dialect, changeids: ids, ...(dialect === 'base' ? { authenticated: baseAuth !== null } : {}) },
      'changes added from a web hook',
    );
    return answer(reply, 200, `${changes.length} change found`);
  };
  app.post('/change_hook', handle);
  app.post('/change_hook/:dialect', handle);
};
