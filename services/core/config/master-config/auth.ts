// Auth: users, role matchers, endpoint matchers and allow rules, OIDC, login throttling.
import { z } from 'zod';
import { parseHash } from '../../auth/scrypt-hash.js';
import { oauth2 } from './oauth2.js';
import { remoteUser } from './remote-user.js';
import { credentialUrl } from './urls.js';

// Authentication and authorization (services/core/auth, services/api/auth), after Buildbot's
// www['auth'] and www['authz']. With neither users nor oidc, everyone may do everything
// (Buildbot's NoAuth); once either is configured and allow_rules is absent, reads stay open
// and every control action needs a login (rule `any-control` for role `@authenticated`).
export const userSchema = z
  .object({
    username: z.string().min(1).max(256),
    // A hash in the PHC-like format `scrypt$N$r$p$salt$hash` (make one with
    // `node --import tsx services/core/auth/hash-password.ts`); never a plain password.
    password_hash: z
      .string()
      .regex(/^scrypt\$/, 'expected an scrypt hash (scrypt$...), never a plain password')
      .refine((h) => parseHash(h) !== null, {
        message: 'expected scrypt$N$r$p$salt$hash with N a power of two and affordable costs',
      }),
    // Buildbot's user info: email defaults to the user name, as Buildbot's default provider does.
    email: z.string().max(256).optional(),
    full_name: z.string().max(256).optional(),
    groups: z.array(z.string().max(256)).max(100).default([]),
  })
  .strict();

/** The users file (auth.users_file, the chart's users Secret): `users: [...]`. */
export const usersFileSchema = z.object({ users: z.array(userSchema).default([]) }).strict();

// A role matcher gives `role` to the users it matches: one of whose groups is listed, whose
// email is listed, whose email's domain is listed, whose user name is listed, or (owner) who
// owns the build or build request the action is about (Buildbot's RolesFromGroups with
// explicit groups, RolesFromEmails, RolesFromDomain, RolesFromUsername, RolesFromOwner).
// `group_prefix` alone is Buildbot's RolesFromGroups(groupPrefix): each group that starts
// with the prefix is a role, named without it ("" makes every group a role).
const roleMatcher = z
  .object({
    role: z.string().min(1).optional(),
    group_prefix: z.string().optional(),
    groups: z.array(z.string()).optional(),
    emails: z.array(z.string()).optional(),
    domains: z.array(z.string()).optional(),
    usernames: z.array(z.string()).optional(),
    owner: z.boolean().optional(),
  })
  .strict()
  .refine((m) => (m.role === undefined) !== (m.group_prefix === undefined), {
    message: 'expected exactly one of role, group_prefix',
  })
  .refine(
    (m) =>
      m.group_prefix !== undefined ||
      [m.groups, m.emails, m.domains, m.usernames].some((l) => l !== undefined) ||
      m.owner === true,
    { message: 'a role needs at least one of groups, emails, domains, usernames, owner' },
  )
  .refine(
    (m) =>
      m.group_prefix === undefined ||
      ([m.groups, m.emails, m.domains, m.usernames, m.owner] as unknown[]).every((v) => v === undefined),
    { message: 'group_prefix stands alone (no groups, emails, domains, usernames or owner with it)' },
  );

// Buildbot's endpoint matchers: any (AnyEndpointMatcher: every request), any-control
// (AnyControlEndpointMatcher: every JSON-RPC action), force, stop (a build's stop and a
// build request's cancel), rebuild, enable-scheduler, and view-builders (also spelled
// view-builds, Buildbot's ViewBuildsEndpointMatcher, which 3.7 left unimplemented): reads
// and events of builders and of what belongs to them.
export const ENDPOINT_MATCHERS = [
  'any',
  'any-control',
  'force',
  'stop',
  'rebuild',
  'enable-scheduler',
  'view-builders',
  'view-builds',
] as const;

// Rules are tried in order. The first that matches the request decides when the user has
// one of its roles (patterns: `*`, `?`, `[...]`) and allows it; otherwise a default_deny
// rule refuses (403), and a rule without default_deny lets the next rules decide. A request
// no rule refuses is allowed. Every logged-in user has the role `@authenticated`.
const allowRule = z
  .object({
    match: z.enum(ENDPOINT_MATCHERS),
    // For force, stop, rebuild and view-builders: only these builders (patterns); all without.
    builders: z.array(z.string().min(1)).optional(),
    roles: z.array(z.string().min(1)).default([]),
    default_deny: z.boolean().default(true),
  })
  .strict();

export const auth = z
  .object({
    users: z.array(userSchema).default([]),
    // A YAML file holding more `users` (a mounted Secret, so hashes stay out of ConfigMaps).
    users_file: z.string().optional(),
    // Buildbot's HTPasswdAuth: an htpasswd file (bcrypt, $apr1$ or {SHA} hashes, as Apache's
    // htpasswd writes them), re-read when it changes; its users log in as `users` do, with no
    // groups (services/core/auth/htpasswd.ts).
    htpasswd_file: z.string().min(1).optional(),
    // GET /auth/login?token=<access token>: a JWT the provider signed, checked against its
    // key set (a file, or a URL fetched over https and cached), its issuer, our audience
    // and its expiry. The user's name comes from username_claim (falling back to `sub`),
    // groups from groups_claim, email (unless email_verified is false) and name as usual.
    oidc: z
      .object({
        issuer: z.string().url(),
        audience: z.string().min(1),
        jwks_file: z.string().min(1).optional(),
        jwks_url: credentialUrl().optional(),
        username_claim: z.string().min(1).default('preferred_username'),
        groups_claim: z.string().min(1).default('groups'),
      })
      .strict()
      .refine((o) => (o.jwks_file === undefined) !== (o.jwks_url === undefined), {
        message: 'expected exactly one of jwks_file, jwks_url',
      })
      .optional(),
    remote_user: remoteUser.optional(),
    oauth2: oauth2.optional(),
    role_matchers: z.array(roleMatcher).default([]),
    allow_rules: z.array(allowRule).optional(),
    // The session cookie's lifetime (the JWT's exp), as Buildbot's cookie_expiration_time
    // (Buildbot: a week). A logout or a change of the user ends a session sooner on our pods;
    // a Buildbot master on the same database honours the cookie until this runs out.
    session_expiry_seconds: z
      .number()
      .int()
      .positive()
      .max(30 * 24 * 3600)
      .default(24 * 3600),
    // Failed logins (password or token), in token buckets in Redis across API pods, each a
    // burst of its limit, then one attempt per window_seconds/limit: per user name from one
    // client address (max_failures_per_user), per client address (max_failures_per_client),
    // and per user name from everywhere (max_failures_per_user_global), which never holds back
    // an address that has not failed for that user, and not clients with a device cookie from
    // an earlier login of that user (those are counted per device, with max_failures_per_user):
    // an attacker cannot lock the owner out. Past a limit, logins answer 429 with the wait
    // (services/api/auth/login-throttle.ts; docs/security.md, "Login throttling").
    login_throttle: z
      .object({
        max_failures_per_user: z.number().int().positive().default(10),
        max_failures_per_client: z.number().int().positive().default(30),
        max_failures_per_user_global: z.number().int().positive().default(100),
        window_seconds: z.number().int().positive().default(900),
      })
      .strict()
      .default({}),
  })
  .strict();
