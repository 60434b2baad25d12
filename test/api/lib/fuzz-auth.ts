// The auth configuration both fuzzers run under (security/fuzz.test.ts against a process,
// garbage.fuzz.test.ts in process): nobody the fuzz plays may act (anonymous clients, the
// user `fuzzer` without control rights, forged sessions); `admin` may, for the calls whose
// refusals must change nothing.
import { hashPassword } from '../../../services/core/auth/password.js';

export const FUZZ_USERS = { fuzzer: 'fuzz', admin: 'admin' } as const;

export async function fuzzAuth() {
  const cheap = { N: 1024, r: 8, p: 1 };
  return {
    users: [
      { username: 'fuzzer', password_hash: await hashPassword(FUZZ_USERS.fuzzer, cheap), groups: ['users'] },
      { username: 'admin', password_hash: await hashPassword(FUZZ_USERS.admin, cheap), groups: ['admins'] },
    ],
    role_matchers: [{ role: 'admins', groups: ['admins'] }],
    allow_rules: [{ match: 'any-control', roles: ['admins'] }],
    // Guessing is throttled per user name only here: one client sends every request.
    login_throttle: { max_failures_per_user: 50, max_failures_per_client: 100_000_000 },
  };
}
