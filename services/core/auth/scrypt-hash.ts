// A scrypt hash's string, `scrypt$N$r$p$salt$hash`, read and bounded (password.ts hashes and
// verifies with it). Apart from password.ts so that the master's configuration check
// (core/config/master-config/auth.ts) reads a user's hash without loading the htpasswd schemes
// and bcryptjs, which only the API's logins use: bcryptjs's import is 8-15 ms of CPU in a fresh
// process (ten, 2026-11-29, load 3-11: `node_modules/.bin/node --input-type=module -e "const c0
// = process.cpuUsage(); await import('bcryptjs'); const c = process.cpuUsage(c0); console.log((c.user
// + c.system) / 1000)"`), at every master's start before.

// 128 * N * r bytes of memory: 32 MiB for the defaults; at most 256 MiB for any hash.
const MAX_MEMORY = 256 * 1024 * 1024;

export interface ParsedHash {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

/** N a power of two above 1; the memory and the work bounded. */
export function paramsAllowed(N: number, r: number, p: number): boolean {
  return (
    Number.isInteger(N) &&
    N >= 2 &&
    N <= 2 ** 24 &&
    (N & (N - 1)) === 0 &&
    Number.isInteger(r) &&
    r >= 1 &&
    r <= 64 &&
    Number.isInteger(p) &&
    p >= 1 &&
    p <= 16 &&
    128 * N * r <= MAX_MEMORY
  );
}

const B64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The parts of a hash string; null when it is not one we can check. */
export function parseHash(s: string): ParsedHash | null {
  const parts = s.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  if (![n, r, p].every((x) => /^[1-9]\d{0,9}$/.test(x))) return null;
  const N = Number(n);
  const R = Number(r);
  const P = Number(p);
  if (!paramsAllowed(N, R, P)) return null;
  if (!B64.test(salt) || !B64.test(hash)) return null;
  const h = Buffer.from(hash, 'base64');
  const sb = Buffer.from(salt, 'base64');
  if (h.length < 16 || h.length > 64 || sb.length < 8) return null;
  return { N, r: R, p: P, salt: sb, hash: h };
}
