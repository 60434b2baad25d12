// The change hook dialects, by their key in the configuration's `change_hooks`: one entry
// each, made once at start from its configuration, null when it is not enabled. The type makes
// the list complete: a dialect the schema (core/config/master-config/change-hooks.ts) knows
// and this list lacks does not compile. What every dialect shares (the route, the body limit,
// adding the changes in one transaction, the answers) is index.ts's.
import type { FastifyRequest } from 'fastify';
import type { ChangeHooksConfig } from '../../core/config/master-config.js';
import { readSecret } from '../../core/config/secret-source.js';
import type { NewChange } from '../../core/data/index.js';
import { baseChange } from './base.js';
import { BASE_AUTH_CHALLENGE, baseAuthCheck } from './base-auth.js';
import { bitbucketChanges } from './bitbucket.js';
import { requestFields } from './body.js';
import { type GithubOptions, githubChanges } from './github.js';
import { gitlabChanges } from './gitlab.js';

export interface Dialect {
  /** The changes a request makes (none: "no change found"); throws the refusal. */
  changes(req: FastifyRequest, body: Buffer): Promise<NewChange[]>;
  /**
   * For a sender that delivers again (GitHub retries, and anyone can replay a signed body):
   * the delivery's id, so that a delivery seen in the last day makes no change (deliveries.ts).
   */
  delivery?(req: FastifyRequest): string | undefined;
  /** For a dialect that asks for credentials: whether this request has them (else a 401). */
  authorize?(req: FastifyRequest): boolean;
  /** The `WWW-Authenticate` challenge sent with that 401. */
  challenge?: string;
}

type Env = Record<string, string | undefined>;
type Dialects = {
  [K in keyof ChangeHooksConfig]-?: (config: NonNullable<ChangeHooksConfig[K]>, env: Env) => Dialect | null;
};

/** The GitHub dialect's options, its secret read from where the configuration says. */
export function githubOptions(
  config: NonNullable<ChangeHooksConfig['github']>,
  env: Env = process.env,
): GithubOptions {
  const secret = readSecret(
    'change_hooks.github',
    { fromEnv: config.secret_env, fromFile: config.secret_file },
    env,
  );
  const token = readSecret(
    'change_hooks.github',
    { fromEnv: config.token_env, fromFile: config.token_file },
    env,
  );
  return {
    secret,
    codebase: config.codebase,
    api: { endpoint: config.github_api_endpoint, token },
    pullrequestRef: config.pullrequest_ref,
    skips: config.skips.map((s) => new RegExp(s)),
    whitelist: config.github_property_whitelist,
    warn: () => {},
  };
}

const DIALECTS: Dialects = {
  base: (config, env) => {
    if (!config.enabled) return null;
    const changes = async (req: FastifyRequest, body: Buffer) => [baseChange(await requestFields(req, body))];
    if (!config.auth) return { changes };
    const check = baseAuthCheck(config.auth, env);
    return {
      changes,
      authorize: (req) => check(req.headers.authorization),
      challenge: BASE_AUTH_CHALLENGE,
    };
  },
  github: (config, env) => {
    const options = githubOptions(config, env);
    return {
      changes: (req, body) =>
        githubChanges(body, req.headers, {
          ...options,
          warn: (message, details) => req.log.warn(details, message),
        }),
      delivery: (req) => {
        const id = req.headers['x-github-delivery'];
        return typeof id === 'string' ? id : undefined;
      },
    };
  },
  gitlab: (config, env) => {
    const secret = readSecret(
      'change_hooks.gitlab',
      { fromEnv: config.secret_env, fromFile: config.secret_file },
      env,
    );
    return { changes: async (req, body) => gitlabChanges(body, req.url, req.headers, { secret }) };
  },
  bitbucket: () => ({
    changes: async (req, body) => bitbucketChanges(await requestFields(req, body), req.headers),
  }),
};

/** The dialects the configuration enables, by name (none without a configuration). */
export function enabledDialects(
  config: ChangeHooksConfig | undefined,
  env: Env = process.env,
): Partial<Record<keyof ChangeHooksConfig, Dialect>> {
  const enabled: Partial<Record<keyof ChangeHooksConfig, Dialect>> = {};
  for (const name of Object.keys(DIALECTS) as (keyof ChangeHooksConfig)[]) {
    const given = config?.[name];
    const dialect =
      given === undefined ? null : (DIALECTS[name] as Dialects[typeof name])(given as never, env);
    if (dialect) enabled[name] = dialect;
  }
  return enabled;
}
