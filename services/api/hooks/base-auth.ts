// The base hook's HTTP Basic check (change_hooks.base.auth; Buildbot's www change_hook_auth,
// which answers 401 with the realm "Protected area"). Without it the hook adds a change for
// anyone who can reach the API, and the API says so at every start (index.ts).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ChangeHooksConfig } from '../../core/config/master-config.js';
import { readSecret } from '../../core/config/secret-source.js';
import { basicCredentials } from '../auth/routes.js';

export const BASE_AUTH_CHALLENGE = 'Basic realm="Protected area"';

type BaseAuthConfig = NonNullable<NonNullable<ChangeHooksConfig['base']>['auth']>;

/** A check of a request's Authorization header against the configured user and password. */
export type BaseAuthCheck = (authorization: string | undefined) => boolean;

// Digests compared in constant time: neither the password's length nor its first wrong
// character shows in the time of a refusal.
const digest = (username: string, password: string) =>
  createHash('sha256').update(`${username}\0${password}`).digest();

export function baseAuthCheck(
  config: BaseAuthConfig,
  env: Record<string, string | undefined>,
): BaseAuthCheck {
  const password = readSecret(
    'change_hooks.base.auth',
    { fromEnv: config.password_env, fromFile: config.password_file },
    env,
  )!;
  const expected = digest(config.username, password);
  return (authorization) => {
    const given = basicCredentials(authorization);
    if (given === null || given === 'malformed') return false;
    return timingSafeEqual(digest(given.username, given.password), expected);
  };
}
