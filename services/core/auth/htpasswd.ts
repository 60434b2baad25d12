// An htpasswd file (Buildbot's HTPasswdAuth, auth.htpasswd_file): a line `user:hash` per user,
// as Apache's htpasswd writes it; blank lines and lines starting with `#` are skipped. Its
// users log in as the configuration's users do (HTTP Basic at /auth/login), each with the
// email its name and no groups (Buildbot's default user info), so role matchers name them by
// `usernames`. A line whose hash is not one htpasswd-hashes.ts checks is refused, naming the
// line (never the hash).
import { ConfigError } from '../config/errors.js';
import type { MasterConfig } from '../config/master-config.js';
import { htpasswdScheme } from './htpasswd-hashes.js';

type UserEntry = MasterConfig['auth']['users'][number];

export function parseHtpasswd(text: string, source: string): UserEntry[] {
  const users: UserEntry[] = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '' || line.startsWith('#')) return;
    const colon = line.indexOf(':');
    const username = colon < 0 ? '' : line.slice(0, colon);
    const hash = colon < 0 ? '' : line.slice(colon + 1).trim();
    if (username === '' || username.length > 256) {
      problems.push(`line ${i + 1}: expected user:hash`);
    } else if (htpasswdScheme(hash) === null) {
      problems.push(
        `line ${i + 1} (${JSON.stringify(username.slice(0, 64))}): expected a bcrypt, $apr1$ or {SHA} hash ` +
          '(htpasswd -B); plain text and crypt() are refused',
      );
    } else {
      users.push({ username, password_hash: hash, groups: [] });
    }
  });
  if (problems.length) throw new ConfigError('CONFIG_SCHEMA', `${source} is invalid`, problems);
  return users;
}
