// Password hashes: scrypt in a PHC-like string `scrypt$N$r$p$salt$hash` (N, r, p decimal;
// salt and hash base64 without padding); an htpasswd file's hashes are htpasswd-hashes.ts's. Verification takes the same time whether or not
// the user exists (a dummy hash stands in), and the parameters a hash may ask for are
// bounded, so a hostile users file cannot make one login cost gigabytes.
import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { dummyLike, htpasswdScheme, verifyHtpasswd } from './htpasswd-hashes.js';
import { type ParsedHash, paramsAllowed, parseHash } from './scrypt-hash.js';

export { type ParsedHash, paramsAllowed, parseHash };

export const DEFAULT_PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const SALT_BYTES = 16;
const KEY_BYTES = 32;

function derive(password: string, salt: Buffer, keylen: number, N: number, r: number, p: number) {
  return new Promise<Buffer>((resolve, reject) =>
    scryptCb(password, salt, keylen, { N, r, p, maxmem: 128 * N * r + 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

const nopad = (b: Buffer) => b.toString('base64').replace(/=+$/, '');

export async function hashPassword(
  password: string,
  params: { N: number; r: number; p: number } = DEFAULT_PARAMS,
) {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, KEY_BYTES, params.N, params.r, params.p);
  return `scrypt$${params.N}$${params.r}$${params.p}$${nopad(salt)}$${nopad(key)}`;
}

// Checked against when the user does not exist, so that the answer takes as long: one per
// set of parameters (those of the configured users, so an unknown name costs what a known one
// costs).
const dummies = new Map<string, Promise<ParsedHash>>();
function dummyHash(params: { N: number; r: number; p: number }): Promise<ParsedHash> {
  const key = `${params.N}$${params.r}$${params.p}`;
  let d = dummies.get(key);
  if (!d) {
    d = hashPassword(randomBytes(16).toString('hex'), params).then((h) => parseHash(h)!);
    dummies.set(key, d);
  }
  return d;
}

/**
 * True when `password` is the one `stored` was made from. `stored` null: an unknown user,
 * checked against a dummy with the parameters of `like` (a configured user's hash).
 */
export async function verifyPassword(
  password: string,
  stored: string | null,
  like?: string | null,
): Promise<boolean> {
  // An htpasswd file's users (htpasswd.ts), and an unknown user where those are the sample.
  if (stored !== null && htpasswdScheme(stored) !== null) return verifyHtpasswd(password, stored);
  if (stored === null && like && htpasswdScheme(like) !== null) {
    await verifyHtpasswd(password, await dummyLike(like));
    return false;
  }
  const parsed = stored === null ? null : parseHash(stored);
  const h = parsed ?? (await dummyHash((like ? parseHash(like) : null) ?? DEFAULT_PARAMS));
  const key = await derive(password, h.salt, h.hash.length, h.N, h.r, h.p);
  return parsed !== null && timingSafeEqual(key, h.hash);
}
