// The password hashes Apache's htpasswd writes, checked as Apache checks them: bcrypt
// (`$2y$`, also `$2a$`/`$2b$`: htpasswd -B), Apache's MD5 (`$apr1$`: htpasswd -m, its default)
// and SHA-1 (`{SHA}` + base64: htpasswd -s). Plain text (htpasswd -p) and crypt(3) DES
// (htpasswd -d) are not accepted: a file holding them is refused at start, naming the line,
// since either gives a password away to whoever reads the file or a day of guessing.
// Buildbot's HTPasswdAuth (Twisted's FilePasswordDB without a hash function) compares the
// file's second field with the password as it is, so a file Buildbot accepts holds plain text:
// hash each with `htpasswd -B` before moving it over (docs/migrating-from-buildbot.md).
import { createHash, timingSafeEqual } from 'node:crypto';
import bcrypt from 'bcryptjs';

export type HtpasswdScheme = 'bcrypt' | 'apr1' | 'sha1';

const BCRYPT = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;
const APR1 = /^\$apr1\$([^$]{1,8})\$[./0-9A-Za-z]{22}$/;
const SHA1 = /^\{SHA\}[A-Za-z0-9+/]{27}=$/;

/** The scheme of a hash htpasswd wrote; null for one it does not check. */
export function htpasswdScheme(hash: string): HtpasswdScheme | null {
  const cost = BCRYPT.exec(hash);
  if (cost) return Number(cost[1]) >= 4 && Number(cost[1]) <= 17 ? 'bcrypt' : null;
  if (APR1.test(hash)) return 'apr1';
  if (SHA1.test(hash)) return 'sha1';
  return null;
}

const ITOA64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function to64(v: number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++, v >>= 6) s += ITOA64[v & 0x3f];
  return s;
}

const md5 = (...parts: Buffer[]) => {
  const h = createHash('md5');
  for (const p of parts) h.update(p);
  return h.digest();
};

/** Apache's MD5 crypt ($apr1$: Poul-Henning Kamp's md5crypt with Apache's magic). */
export function apr1(password: string, salt: string): string {
  const pw = Buffer.from(password, 'utf8');
  const sa = Buffer.from(salt, 'utf8');
  const magic = Buffer.from('$apr1$');
  const alternate = md5(pw, sa, pw);
  const first: Buffer[] = [pw, magic, sa];
  for (let left = pw.length; left > 0; left -= 16) first.push(alternate.subarray(0, Math.min(left, 16)));
  for (let i = pw.length; i; i >>= 1) first.push(i & 1 ? Buffer.alloc(1) : pw.subarray(0, 1));
  let f = md5(...first);
  for (let i = 0; i < 1000; i++) {
    const parts: Buffer[] = [i & 1 ? pw : f];
    if (i % 3) parts.push(sa);
    if (i % 7) parts.push(pw);
    parts.push(i & 1 ? f : pw);
    f = md5(...parts);
  }
  const b = (i: number) => f[i]!;
  const out =
    to64((b(0) << 16) | (b(6) << 8) | b(12), 4) +
    to64((b(1) << 16) | (b(7) << 8) | b(13), 4) +
    to64((b(2) << 16) | (b(8) << 8) | b(14), 4) +
    to64((b(3) << 16) | (b(9) << 8) | b(15), 4) +
    to64((b(4) << 16) | (b(10) << 8) | b(5), 4) +
    to64(b(11), 2);
  return `$apr1$${salt}$${out}`;
}

const same = (a: string, b: string) => {
  const x = createHash('sha256').update(a).digest();
  const y = createHash('sha256').update(b).digest();
  return timingSafeEqual(x, y);
};

/** Whether `password` is the one `hash` (of a scheme htpasswdScheme names) was made from. */
export async function verifyHtpasswd(password: string, hash: string): Promise<boolean> {
  switch (htpasswdScheme(hash)) {
    case 'bcrypt':
      return bcrypt.compare(password, hash);
    case 'apr1':
      return same(apr1(password, APR1.exec(hash)![1]!), hash);
    case 'sha1':
      return same(`{SHA}${createHash('sha1').update(password, 'utf8').digest('base64')}`, hash);
    default:
      return false;
  }
}

// An unknown user's check costs what a known one's does: a dummy bcrypt hash of the cost the
// file's users have (apr1 and SHA-1 cost next to nothing either way).
const dummies = new Map<string, Promise<string>>();

/** A hash like `like` (a configured user's) of a password nobody knows. */
export function dummyLike(like: string): Promise<string> {
  const cost = BCRYPT.exec(like)?.[1];
  if (cost === undefined) return Promise.resolve(apr1('x', 'dummysal'));
  let d = dummies.get(cost);
  if (!d) {
    d = bcrypt.hash(createHash('sha256').update(String(Math.random())).digest('hex'), Number(cost));
    dummies.set(cost, d);
  }
  return d;
}
