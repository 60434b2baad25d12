// Who may log in to an API pod, and what each user may do: the configuration's users (or
// users file) and OIDC provider, the authorization rules, and the throttle on failed logins.
import type { Redis } from 'ioredis';
import { type AuthzPolicy, DEFAULT_RULES } from '../../core/auth/authz.js';
import { UserDirectory } from '../../core/auth/users.js';
import type { AuthConfig } from '../../core/config/master-config.js';
import type { ConnectionPool } from '../../core/db/pool.js';
import type { ForceScheduler } from '../../core/force/parameters.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { Authorizer } from '../auth/authorizer.js';
import { LoginThrottle } from '../auth/login-throttle.js';
import { OAuth2Login } from '../auth/oauth2/index.js';
import { TokenVerifier } from '../auth/oidc.js';
import { RemoteUserLogin } from '../auth/remote-user.js';
import { Targets } from '../auth/targets.js';

const DEFAULT_THROTTLE = {
  max_failures_per_user: 10,
  max_failures_per_client: 30,
  max_failures_per_user_global: 100,
  window_seconds: 900,
};

/** Whether anyone logs in with a password: users inline, in a users file or an htpasswd file. */
const passwordLogins = (auth: AuthConfig) =>
  auth.users.length > 0 || auth.users_file !== undefined || auth.htpasswd_file !== undefined;

/** The authorization rules in force, Buildbot's way (see core/config/master-config/auth.ts). */
export function authzPolicy(auth: AuthConfig | undefined): AuthzPolicy {
  const loginsExist = !!auth && (passwordLogins(auth) || !!auth.oidc || !!auth.remote_user || !!auth.oauth2);
  return {
    rules: auth?.allow_rules ?? (loginsExist ? DEFAULT_RULES : []),
    roleMatchers: auth?.role_matchers ?? [],
  };
}

export interface Logins {
  /** The users who log in with a password; null: nobody does. */
  users: UserDirectory | null;
  tokens: TokenVerifier | null;
  remoteUser: RemoteUserLogin | null;
  oauth2: OAuth2Login | null;
  /** The events part asks it too (authorize), of req.userInfo, which every request carries. */
  authz: Authorizer;
  throttle: LoginThrottle;
}

export function loginsOf(opts: {
  auth: AuthConfig | undefined;
  db: ConnectionPool;
  redis: Redis;
  forceByName: ReadonlyMap<string, ForceScheduler>;
  keyPrefix: string;
  log: Logger;
  /** Where the OAuth2 provider sends the browser back to (<publicUrl>auth/login). */
  publicUrl: string;
  /** Where auth.oauth2's client secret is looked up (default process.env). */
  env?: Record<string, string | undefined>;
}): Logins {
  const { auth } = opts;
  const users =
    auth && passwordLogins(auth)
      ? new UserDirectory(
          auth.users,
          auth.users_file,
          (err) => opts.log.error({ err: err.message }, 'users file not reloaded; the previous users stay'),
          undefined,
          auth.htpasswd_file,
        )
      : null;
  const throttleCfg = { ...DEFAULT_THROTTLE, ...auth?.login_throttle };
  return {
    users,
    tokens: auth?.oidc ? TokenVerifier.fromConfig(auth.oidc) : null,
    remoteUser: auth?.remote_user ? RemoteUserLogin.fromConfig(auth.remote_user) : null,
    oauth2: auth?.oauth2
      ? OAuth2Login.fromConfig(auth.oauth2, opts.publicUrl, opts.env ?? process.env)
      : null,
    authz: new Authorizer(authzPolicy(auth), new Targets(opts.db), opts.forceByName),
    throttle: new LoginThrottle(opts.redis, {
      maxFailuresPerUser: throttleCfg.max_failures_per_user,
      maxFailuresPerClient: throttleCfg.max_failures_per_client,
      maxFailuresPerUserGlobal: throttleCfg.max_failures_per_user_global,
      windowSeconds: throttleCfg.window_seconds,
      keyPrefix: opts.keyPrefix,
    }),
  };
}
