// Logins from an htpasswd file (auth.htpasswd_file, Buildbot's HTPasswdAuth), its lines written
// by Debian's htpasswd (apache2-utils) as this test runs: bcrypt (-B), Apache's MD5 (-m) and
// SHA-1 (-s) each log in with the right password and only with it; an unknown user is refused
// as a wrong password is; role matchers give the file's users roles by name; a file with a
// plain-text or crypt() line is refused at start, naming the line; a changed file is re-read.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseHtpasswd } from '../../../services/core/auth/htpasswd.js';
import { apr1, verifyHtpasswd } from '../../../services/core/auth/htpasswd-hashes.js';
import { UserDirectory } from '../../../services/core/auth/users.js';
import { AuthApp, basic } from './lib.js';

const dir = mkdtempSync(join(tmpdir(), 'flotilla-htpasswd-'));
const file = join(dir, 'users.htpasswd');

/** A line as Debian's htpasswd writes it (`-n`: to standard output; `-b`: password as argument). */
const htpasswd = (flag: string, user: string, password: string) =>
  execFileSync('htpasswd', ['-nb', flag, user, password], { encoding: 'utf8' }).trim();

let api: AuthApp;
beforeAll(async () => {
  writeFileSync(
    file,
    [
      '# written by htpasswd',
      htpasswd('-B', 'bea', 'bcrypt pässword'),
      htpasswd('-m', 'april', 'md5-password'),
      htpasswd('-s', 'shay', 'sha-password'),
      '',
    ].join('\n'),
  );
  api = await AuthApp.start({
    auth: {
      htpasswd_file: file,
      role_matchers: [{ role: 'admins', usernames: ['bea'] }],
    },
  });
});
afterAll(async () => {
  await api?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('an htpasswd file written by Debian’s htpasswd', () => {
  it.each([
    ['bea', 'bcrypt pässword', '$2y$'],
    ['april', 'md5-password', '$apr1$'],
    ['shay', 'sha-password', '{SHA}'],
  ])('%s logs in with the right password only', async (user, password, prefix) => {
    const line = parseHtpasswd(
      htpasswd(prefix === '$2y$' ? '-B' : prefix === '$apr1$' ? '-m' : '-s', user, password),
      'x',
    );
    expect(line[0]!.password_hash.startsWith(prefix)).toBe(true);
    const ok = await api.get('/auth/login', { headers: { authorization: basic(user, password) } });
    expect(ok.status).toBe(302);
    const bad = await api.get('/auth/login', { headers: { authorization: basic(user, `${password}x`) } });
    expect(bad.status).toBe(401);
  });

  it('an unknown user is refused as a wrong password is; the user info is Buildbot’s default', async () => {
    const unknown = await api.get('/auth/login', { headers: { authorization: basic('nobody', 'x') } });
    expect([unknown.status, unknown.headers['www-authenticate']]).toEqual([401, 'basic realm="buildbot"']);
    const session = await api.login('bea', 'bcrypt pässword');
    const config = (await api.get('/config', { session })).json();
    expect(config.user).toMatchObject({ username: 'bea', email: 'bea', groups: [] });
    expect(config.roles).toContain('admins');
  });
});

describe('the hashes', () => {
  it("Apache's MD5 matches the vector Apache's documentation gives, and htpasswd's own", async () => {
    // From Apache's "Password Formats" page (and `openssl passwd -apr1 -salt qHDFfhPC myPassword`).
    expect(apr1('myPassword', 'qHDFfhPC')).toBe('$apr1$qHDFfhPC$nITSVHgYbDAK1Y0acGRnY0');
    const fresh = htpasswd('-m', 'u', 'päss wörd').split(':')[1]!;
    expect(await verifyHtpasswd('päss wörd', fresh)).toBe(true);
    expect(await verifyHtpasswd('pass word', fresh)).toBe(false);
  });

  it('a plain-text or crypt() line is refused, naming the line and never the hash', () => {
    const text = `${htpasswd('-B', 'ok', 'pw')}\nplainuser:${'s3cret'}\n${htpasswd('-d', 'cryptuser', 'pw')}\nnocolon\n`;
    let message = '';
    try {
      parseHtpasswd(text, 'auth.htpasswd_file');
    } catch (err) {
      message = `${(err as Error).message}: ${(err as { problems?: string[] }).problems?.join('; ')}`;
    }
    expect(message).toMatch(/line 2 \("plainuser"\): expected a bcrypt/);
    expect(message).toMatch(/line 3 \("cryptuser"\)/);
    expect(message).toMatch(/line 4: expected user:hash/);
    expect(message).not.toContain('s3cret');
  });

  it('a changed file is re-read; an invalid one keeps the last good users', () => {
    const f = join(dir, 'reload.htpasswd');
    writeFileSync(f, `${htpasswd('-s', 'one', 'pw')}\n`);
    const errors: Error[] = [];
    const users = new UserDirectory([], undefined, (e) => errors.push(e), 0, f);
    expect(users.find('one')).toBeDefined();
    writeFileSync(f, `${htpasswd('-s', 'two', 'pw')}\n`);
    utimesSync(f, new Date(), new Date(Date.now() + 5000));
    expect([users.find('one', Date.now() + 1), users.find('two', Date.now() + 2)?.username]).toEqual([
      undefined,
      'two',
    ]);
    writeFileSync(f, 'two:plain\n');
    utimesSync(f, new Date(), new Date(Date.now() + 10000));
    expect(users.find('two', Date.now() + 3)).toBeDefined();
    expect(errors.map((e) => e.message).join()).toMatch(/auth.htpasswd_file is invalid/);
  });
});
