// Buildbot's authz, as a pure function of the rules, the role matchers, the user and what
// the request matches: roles come from the user's details (groups, email, its domain, user
// name) and, once a rule matched an action on a build or build request, from owning it;
// rules are tried in order, and the first matching rule either allows (the user has one of
// its roles), refuses (default_deny), or passes the decision on. Matching a rule against a
// request needs the database (builders of a build, owners), so the caller supplies it.
import type { MasterConfig } from '../config/master-config.js';
import { fnmatch } from './fnmatch.js';

export type AllowRule = NonNullable<MasterConfig['auth']['allow_rules']>[number];
export type RoleMatcher = MasterConfig['auth']['role_matchers'][number];
export type SessionUser = Record<string, unknown>;

/** Every logged-in user has this role, whatever the matchers say. */
export const AUTHENTICATED_ROLE = '@authenticated';

/** Without allow rules, once logins exist: reads open, control for logged-in users. */
export const DEFAULT_RULES: readonly AllowRule[] = [
  { match: 'any-control', roles: [AUTHENTICATED_ROLE], default_deny: true },
];

export function isAnonymous(user: SessionUser | undefined): boolean {
  return !user || user.anonymous === true || typeof user.username !== 'string' || user.username === '';
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x) => typeof x === 'string') : []);

/**
 * A request made with an API token (services/api/auth/api-tokens.ts) carries the roles its
 * user chose for it as `token_roles`: the user's roles are cut to those, ownership's too, so
 * a token never does more than its user may now, nor more than it was made for.
 */
export const TOKEN_ROLES = 'token_roles';

function tokenLimit(user: SessionUser | undefined): ((role: string) => boolean) | null {
  const limit = user?.[TOKEN_ROLES];
  if (!Array.isArray(limit)) return null;
  return (role) => limit.includes(role);
}

/** Roles from who the user is (everything but ownership), cut to a token's. */
export function rolesOf(user: SessionUser | undefined, matchers: readonly RoleMatcher[]): Set<string> {
  const roles = userRoles(user, matchers);
  const allowed = tokenLimit(user);
  if (allowed) for (const r of roles) if (!allowed(r)) roles.delete(r);
  return roles;
}

/** Roles from who the user is, whatever a token allows (what a user may give a token). */
export function userRoles(user: SessionUser | undefined, matchers: readonly RoleMatcher[]): Set<string> {
  const roles = new Set<string>();
  if (isAnonymous(user)) return roles;
  const u = user!;
  roles.add(AUTHENTICATED_ROLE);
  const groups = strings(u.groups);
  const email = str(u.email);
  const domain = email?.includes('@') ? email.split('@').at(-1) : undefined;
  const username = str(u.username);
  for (const m of matchers) {
    if (m.group_prefix !== undefined) {
      for (const g of groups) if (g.startsWith(m.group_prefix)) roles.add(g.slice(m.group_prefix.length));
      continue;
    }
    if (
      (m.groups?.some((g) => groups.includes(g)) ?? false) ||
      (email !== undefined && (m.emails?.includes(email) ?? false)) ||
      (domain !== undefined && (m.domains?.includes(domain) ?? false)) ||
      (username !== undefined && (m.usernames?.includes(username) ?? false))
    ) {
      roles.add(m.role!);
    }
  }
  return roles;
}

/** Who a user is as an owner: the rule JSON-RPC uses to record owners (Buildbot's). */
export function ownerNameOf(user: SessionUser | undefined): string {
  if (!user || user.anonymous) return 'anonymous';
  for (const k of ['email', 'username', 'full_name']) {
    const v = user[k];
    if (typeof v === 'string' && v) return v;
  }
  return 'anonymous';
}

/** Roles of owner matchers, for a user who owns what the action is about. */
export function ownerRoles(
  user: SessionUser | undefined,
  owner: string | null,
  matchers: readonly RoleMatcher[],
): string[] {
  if (owner === null || owner === '' || isAnonymous(user)) return [];
  // Buildbot compares the owner with the user's email; an owner recorded from a user without
  // one is the user name, so both identify the user.
  const mine = owner === str(user!.email) || owner === ownerNameOf(user);
  return mine ? ownableRoles(user, matchers) : [];
}

/** The roles owner matchers may give this user, cut to a token's. */
function ownableRoles(user: SessionUser | undefined, matchers: readonly RoleMatcher[]): string[] {
  const allowed = tokenLimit(user) ?? (() => true);
  return matchers
    .filter((m) => m.owner === true && m.role !== undefined && allowed(m.role))
    .map((m) => m.role!);
}

/** What a rule matched: enough to find the owner, when owner matchers need one. */
export interface RuleMatch {
  owner(): Promise<string | null>;
}

export type Decision = { allowed: true } | { allowed: false; message: string };

function needRoleMessage(roles: readonly string[]): string {
  if (roles.length === 1) return `you need to have role '${roles[0]}'`;
  if (roles.length === 0) return 'no role may do this';
  return `you need to have one of the roles ${roles.map((r) => `'${r}'`).join(', ')}`;
}

export interface AuthzPolicy {
  rules: readonly AllowRule[];
  roleMatchers: readonly RoleMatcher[];
}

/** Whether one of these roles is among the rule's (fnmatch patterns). */
function hasRole(roles: Iterable<string>, rule: AllowRule): boolean {
  for (const r of roles) if (rule.roles.some((pattern) => fnmatch(r, pattern))) return true;
  return false;
}

/** The decision for one request, walking the rules as Buildbot's assertUserAllowed does. */
export async function decide(
  policy: AuthzPolicy,
  user: SessionUser | undefined,
  match: (rule: AllowRule) => Promise<RuleMatch | null>,
): Promise<Decision> {
  if (policy.rules.length === 0) return { allowed: true };
  const roles = rolesOf(user, policy.roleMatchers);
  const ownerMatchers = policy.roleMatchers.filter((m) => m.owner === true);
  for (const rule of policy.rules) {
    const m = await match(rule);
    if (m === null) continue;
    const have = new Set(roles);
    if (ownerMatchers.length && !isAnonymous(user)) {
      for (const r of ownerRoles(user, await m.owner(), ownerMatchers)) have.add(r);
    }
    if (hasRole(have, rule)) return { allowed: true };
    if (!rule.default_deny) continue;
    return { allowed: false, message: needRoleMessage(rule.roles) };
  }
  return { allowed: true };
}

/** The same walk for a read, where every rule can be matched at once (no owners: reads have none). */
export function decideSync(
  policy: AuthzPolicy,
  user: SessionUser | undefined,
  match: (rule: AllowRule) => boolean,
): Decision {
  if (policy.rules.length === 0) return { allowed: true };
  const roles = rolesOf(user, policy.roleMatchers);
  for (const rule of policy.rules) {
    if (!match(rule)) continue;
    if (hasRole(roles, rule)) return { allowed: true };
    if (!rule.default_deny) continue;
    return { allowed: false, message: needRoleMessage(rule.roles) };
  }
  return { allowed: true };
}

/**
 * Whether the user administers the cluster, for what only administrators read (the audit
 * log): a rule for every control action (`any-control`) or for everything (`any`) grants
 * them one of its roles, walking those rules in order as Buildbot's walk does. Stricter
 * than that walk in one way: when no such rule grants it, the answer is no (Buildbot allows
 * what no rule refuses). Without rules at all everything is allowed, as everywhere else.
 */
export function decideAdmin(policy: AuthzPolicy, user: SessionUser | undefined): Decision {
  if (policy.rules.length === 0) return { allowed: true };
  const roles = rolesOf(user, policy.roleMatchers);
  const rules = policy.rules.filter((r) => r.match === 'any' || r.match === 'any-control');
  const asked: string[] = [];
  for (const rule of rules) {
    if (hasRole(roles, rule)) return { allowed: true };
    asked.push(...rule.roles);
    if (rule.default_deny) break;
  }
  return { allowed: false, message: needRoleMessage([...new Set(asked)]) };
}

/**
 * Whether some target of an action may be allowed to this user: false only when the rules
 * refuse it whatever the builder and whoever owns it. The web UI hides a button on false and
 * shows it otherwise (a refusal of that particular target is then the API's 403, shown).
 * `kind` says which rules may apply: `certain` for a rule that matches every target of the
 * action, `some` for one limited to some builders, null for one that never applies.
 */
export function mayEver(
  policy: AuthzPolicy,
  user: SessionUser | undefined,
  kind: (rule: AllowRule) => 'certain' | 'some' | null,
): boolean {
  if (policy.rules.length === 0) return true;
  const roles = rolesOf(user, policy.roleMatchers);
  // Owning a build or a request may grant these roles, to a logged-in user only.
  const ownable = isAnonymous(user) ? [] : ownableRoles(user, policy.roleMatchers);
  for (const rule of policy.rules) {
    const k = kind(rule);
    if (k === null) continue;
    if (hasRole(roles, rule) || hasRole(ownable, rule)) return true;
    if (rule.default_deny && k === 'certain') return false;
  }
  return true;
}
