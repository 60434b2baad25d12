// The pieces under the login and the rules: scrypt hashes and the CLI that makes them,
// shell patterns, roles from user details, Buildbot's rule walk, client identities.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { addressKey } from '../../../services/api/auth/client.js';
import {
  type AllowRule,
  AUTHENTICATED_ROLE,
  decide,
  ownerNameOf,
  ownerRoles,
  type RoleMatcher,
  rolesOf,
} from '../../../services/core/auth/authz.js';
import { fnmatch } from '../../../services/core/auth/fnmatch.js';
import { hashPassword, parseHash, verifyPassword } from '../../../services/core/auth/password.js';
import { masterConfigSchema } from '../../../services/core/config/master-config.js';
import { serviceCommand } from '../../helpers/service-build.js';

describe('password hashes', () => {
  it('scrypt$N$r$p$salt$hash: verifies the password it was made from, and only that', async () => {
    const h = await hashPassword('correct horse', { N: 1024, r: 8, p: 1 });
    expect(h).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(await verifyPassword('correct horse', h)).toBe(true);
    expect(await verifyPassword('correct horse ', h)).toBe(false);
    expect(await verifyPassword('', h)).toBe(false);
    // Unknown user: the same work, and false.
    expect(await verifyPassword('correct horse', null)).toBe(false);
    // Two hashes of one password differ (salt).
    expect(await hashPassword('x', { N: 1024, r: 8, p: 1 })).not.toBe(
      await hashPassword('x', { N: 1024, r: 8, p: 1 }),
    );
  });

  it('refuses hashes a login could not afford or that are not ours', () => {
    const salt = 'AAAAAAAAAAAAAAAAAAAAAA';
    const key = 'A'.repeat(43);
    expect(parseHash(`scrypt$16384$8$1$${salt}$${key}`)).not.toBeNull();
    for (const bad of [
      `scrypt$1000$8$1$${salt}$${key}`, // N not a power of two
      `scrypt$1$8$1$${salt}$${key}`,
      `scrypt$67108864$8$1$${salt}$${key}`, // 8 GiB of memory
      `scrypt$16384$65$1$${salt}$${key}`,
      `scrypt$16384$8$17$${salt}$${key}`,
      `scrypt$16384$8$1$$${key}`,
      `scrypt$16384$8$1$${salt}$QUJD`, // 3 bytes of hash
      `scrypt$16384$8$1$${salt}`,
      `scrypt$0x10$8$1$${salt}$${key}`,
      `bcrypt$16384$8$1$${salt}$${key}`,
      'hunter2',
    ]) {
      expect(parseHash(bad), bad).toBeNull();
    }
  });

  it('the configuration refuses a plain password or a broken hash, with the path', () => {
    const r = masterConfigSchema.safeParse({
      auth: { users: [{ username: 'a', password_hash: 'hunter2' }] },
    });
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error!.issues[0]!.path)).toBe('["auth","users",0,"password_hash"]');
    const r2 = masterConfigSchema.safeParse({
      auth: { users: [{ username: 'a', password_hash: 'scrypt$3$8$1$AAAAAAAAAAA$AAAA' }] },
    });
    expect(r2.success).toBe(false);
  });

  it('hash-password.ts reads the password from stdin and prints a hash that verifies', async () => {
    const out = execFileSync(
      process.execPath,
      [...serviceCommand('services/core/auth/hash-password.ts'), '--N', '1024'],
      { input: 'p@ss wörd\n', encoding: 'utf8' },
    ).trim();
    expect(out).toMatch(/^scrypt\$1024\$8\$1\$/);
    expect(await verifyPassword('p@ss wörd', out)).toBe(true);
    let code = 0;
    try {
      execFileSync(
        process.execPath,
        [...serviceCommand('services/core/auth/hash-password.ts'), '--N', '1000'],
        {
          input: 'x\n',
          stdio: ['pipe', 'pipe', 'pipe'],
        },
      );
    } catch (err) {
      code = (err as { status: number }).status;
    }
    expect(code).toBe(2);
  });
});

describe('fnmatch, as Python on POSIX', () => {
  it.each([
    ['runtests', 'run*', true],
    ['runtests', 'Run*', false],
    ['runtests', 'runtest?', true],
    ['runtests', '*tests', true],
    ['a.b', 'a?b', true],
    ['ab', 'a.b', false],
    ['dev', '[cd]ev', true],
    ['fev', '[!f]ev', false],
    ['gev', '[!f]ev', true],
    ['b', '[a-c]', true],
    ['[x', '[x', true],
    ['a/b', 'a*', true],
    ['x', '', false],
    ['', '', true],
    ['a(b)', 'a(b)', true],
    ['ab', 'a|b', false],
    ['x\ny', 'x*y', true],
  ])('%j against %j: %s', (name, pattern, want) => {
    expect(fnmatch(name, pattern)).toBe(want);
  });
});

describe('roles', () => {
  const matchers: RoleMatcher[] = [
    { role: 'devs', groups: ['dev'] },
    { role: 'vip', emails: ['boss@example.org'] },
    { role: 'staff', domains: ['example.org'] },
    { role: 'ops', usernames: ['olga'] },
    { group_prefix: 'bb-' },
    { role: 'mine', owner: true },
  ];
  it('from groups, emails, domains, user names and group prefixes; logged-in users are @authenticated', () => {
    expect(
      [
        ...rolesOf({ username: 'boss', email: 'boss@example.org', groups: ['dev', 'bb-admins'] }, matchers),
      ].sort(),
    ).toEqual([AUTHENTICATED_ROLE, 'admins', 'devs', 'staff', 'vip'].sort());
    expect([...rolesOf({ username: 'olga', email: 'olga@elsewhere.example' }, matchers)].sort()).toEqual(
      [AUTHENTICATED_ROLE, 'ops'].sort(),
    );
    expect([...rolesOf({ anonymous: true }, matchers)]).toEqual([]);
    // A session without a user name is not a login, whatever else it claims.
    expect([...rolesOf({ email: 'boss@example.org', groups: ['dev'] }, matchers)]).toEqual([]);
    expect([...rolesOf({ username: 'x', groups: 'dev' }, matchers)]).toEqual([AUTHENTICATED_ROLE]);
  });
  it('owners: by email, else by the name recorded as owner', () => {
    expect(ownerRoles({ username: 'a', email: 'a@x.org' }, 'a@x.org', matchers)).toEqual(['mine']);
    expect(ownerRoles({ username: 'a' }, 'a', matchers)).toEqual(['mine']);
    expect(ownerRoles({ username: 'a', email: 'a@x.org' }, 'b@x.org', matchers)).toEqual([]);
    expect(ownerRoles({ anonymous: true }, 'anonymous', matchers)).toEqual([]);
    expect(ownerNameOf({ username: 'a', full_name: 'A' })).toBe('a');
    expect(ownerNameOf(undefined)).toBe('anonymous');
  });
});

describe("Buildbot's rule walk", () => {
  const rule = (match: AllowRule['match'], roles: string[], default_deny = true): AllowRule => ({
    match,
    roles,
    default_deny,
  });
  const policy = (rules: AllowRule[]) => ({
    rules,
    roleMatchers: [{ role: 'devs', groups: ['dev'] }] as RoleMatcher[],
  });
  const dev = { username: 'd', groups: ['dev'] };
  const matchAll = async () => ({ owner: async () => null });
  it('first matching rule decides; no rules or no match allows', async () => {
    expect(await decide(policy([]), undefined, matchAll)).toEqual({ allowed: true });
    expect(await decide(policy([rule('any', ['devs'])]), undefined, async () => null)).toEqual({
      allowed: true,
    });
    expect(await decide(policy([rule('any', ['devs'])]), dev, matchAll)).toEqual({ allowed: true });
    expect(await decide(policy([rule('any', ['devs'])]), { username: 'x' }, matchAll)).toEqual({
      allowed: false,
      message: "you need to have role 'devs'",
    });
    expect(
      await decide(policy([rule('any', ['devs'], false), rule('any', ['*'])]), { username: 'x' }, matchAll),
    ).toEqual({ allowed: true });
    expect(await decide(policy([rule('any', ['devs'], false)]), { anonymous: true }, matchAll)).toEqual({
      allowed: true,
    });
  });
  it('owners are asked only when a rule matched and owner matchers exist', async () => {
    let asked = 0;
    const m = async () => ({
      owner: async () => {
        asked++;
        return 'd';
      },
    });
    await decide(policy([rule('stop', ['mine'])]), dev, m);
    expect(asked).toBe(0);
    const withOwner = {
      rules: [rule('stop', ['mine'])],
      roleMatchers: [{ role: 'mine', owner: true }] as RoleMatcher[],
    };
    expect(await decide(withOwner, dev, m)).toEqual({ allowed: true });
    expect(asked).toBe(1);
    expect((await decide(withOwner, { username: 'e' }, m)).allowed).toBe(false);
  });
});

describe('client addresses', () => {
  it.each([
    ['10.1.2.3', '10.1.2.3'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff::', '2001:db8:1:2::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
  ])('%s counts as %s', (ip, key) => {
    expect(addressKey(ip)).toBe(key);
  });
});
