// Verifying an OAuth 2.0 / OpenID Connect access token that is a signed JWT (RFC 7515,
// 7517, 7519, 9068) against the provider's key set: signature first (only asymmetric
// algorithms; never `none`, never an HMAC with a public key), then issuer, audience and
// time. Each refusal says why, for the log; the client only ever learns "unauthorized".
import { createPublicKey, type KeyObject, verify, type webcrypto } from 'node:crypto';

export type JwtAlgorithm =
  | 'RS256'
  | 'RS384'
  | 'RS512'
  | 'PS256'
  | 'PS384'
  | 'PS512'
  | 'ES256'
  | 'ES384'
  | 'ES512'
  | 'EdDSA';

interface AlgorithmSpec {
  kty: 'RSA' | 'EC' | 'OKP';
  hash: string | null;
  crv?: string;
  pss?: boolean;
}

const ALGORITHMS: Record<JwtAlgorithm, AlgorithmSpec> = {
  RS256: { kty: 'RSA', hash: 'sha256' },
  RS384: { kty: 'RSA', hash: 'sha384' },
  RS512: { kty: 'RSA', hash: 'sha512' },
  PS256: { kty: 'RSA', hash: 'sha256', pss: true },
  PS384: { kty: 'RSA', hash: 'sha384', pss: true },
  PS512: { kty: 'RSA', hash: 'sha512', pss: true },
  ES256: { kty: 'EC', hash: 'sha256', crv: 'P-256' },
  ES384: { kty: 'EC', hash: 'sha384', crv: 'P-384' },
  ES512: { kty: 'EC', hash: 'sha512', crv: 'P-521' },
  EdDSA: { kty: 'OKP', hash: null, crv: 'Ed25519' },
};

export class JwtError extends Error {
  override name = 'JwtError';
}

/** The longest token we look at; real access tokens are a few kilobytes. */
export const MAX_TOKEN_LENGTH = 16 * 1024;
const B64URL = /^[A-Za-z0-9_-]*$/;

export interface Jwk extends webcrypto.JsonWebKey {
  kid?: string;
  use?: string;
  alg?: string;
  key_ops?: string[];
}

interface UsableKey {
  kid: string | undefined;
  alg: string | undefined;
  kty: string;
  crv: string | undefined;
  key: KeyObject;
}

/** A provider's key set (`{"keys": [...]}`), public signing keys only. */
export class KeySet {
  private constructor(private readonly keys: UsableKey[]) {}

  static from(doc: unknown): KeySet {
    if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { keys?: unknown }).keys)) {
      throw new JwtError('a key set is an object with a "keys" list');
    }
    const keys: UsableKey[] = [];
    for (const k of (doc as { keys: unknown[] }).keys) {
      if (typeof k !== 'object' || k === null) continue;
      const jwk = k as Jwk;
      if (jwk.use !== undefined && jwk.use !== 'sig') continue;
      if (jwk.key_ops !== undefined && !jwk.key_ops.includes('verify')) continue;
      // A symmetric key or a private part has no place in a public key set.
      if (jwk.kty === 'oct' || jwk.d !== undefined) continue;
      if (jwk.kty !== 'RSA' && jwk.kty !== 'EC' && jwk.kty !== 'OKP') continue;
      let key: KeyObject;
      try {
        key = createPublicKey({ key: jwk, format: 'jwk' });
      } catch {
        continue;
      }
      keys.push({ kid: jwk.kid, alg: jwk.alg, kty: jwk.kty, crv: jwk.crv, key });
    }
    return new KeySet(keys);
  }

  get size(): number {
    return this.keys.length;
  }

  has(kid: string | undefined): boolean {
    return kid === undefined ? this.keys.length > 0 : this.keys.some((k) => k.kid === kid);
  }

  /** The keys that may have made a signature with `alg` (and `kid`, when the token names one). */
  candidates(alg: JwtAlgorithm, kid: string | undefined): KeyObject[] {
    const spec = ALGORITHMS[alg];
    return this.keys
      .filter(
        (k) =>
          (kid === undefined || k.kid === kid) &&
          k.kty === spec.kty &&
          (spec.crv === undefined || k.crv === spec.crv) &&
          (k.alg === undefined || k.alg === alg),
      )
      .map((k) => k.key);
  }
}

export interface DecodedJwt {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  signingInput: Buffer;
  signature: Buffer;
}

function decodePart(part: string, what: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new JwtError(`the ${what} is not base64url JSON`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new JwtError(`the ${what} is not an object`);
  return v as Record<string, unknown>;
}

export function decodeJwt(token: string): DecodedJwt {
  if (token.length > MAX_TOKEN_LENGTH) throw new JwtError('the token is too long');
  const parts = token.split('.');
  if (parts.length !== 3) throw new JwtError('not a signed JWT (three parts)');
  const [h, c, s] = parts as [string, string, string];
  if (!B64URL.test(h) || !B64URL.test(c) || !B64URL.test(s) || s === '') {
    throw new JwtError('not base64url');
  }
  return {
    header: decodePart(h, 'header'),
    claims: decodePart(c, 'payload'),
    signingInput: Buffer.from(`${h}.${c}`, 'ascii'),
    signature: Buffer.from(s, 'base64url'),
  };
}

function checkSignature(jwt: DecodedJwt, keys: KeySet): void {
  const alg = jwt.header.alg;
  if (typeof alg !== 'string' || !(alg in ALGORITHMS)) {
    throw new JwtError(`algorithm ${JSON.stringify(alg)} is not accepted`);
  }
  if (jwt.header.crit !== undefined) throw new JwtError('critical header extensions are not supported');
  const kid = typeof jwt.header.kid === 'string' ? jwt.header.kid : undefined;
  const spec = ALGORITHMS[alg as JwtAlgorithm];
  const candidates = keys.candidates(alg as JwtAlgorithm, kid);
  if (candidates.length === 0) throw new JwtError(`no key for kid ${JSON.stringify(kid)} and ${alg}`);
  for (const key of candidates) {
    let ok = false;
    try {
      ok =
        spec.kty === 'RSA'
          ? verify(
              spec.hash,
              jwt.signingInput,
              spec.pss
                ? { key, padding: 6 /* RSA_PKCS1_PSS_PADDING */, saltLength: -1 /* the digest's length */ }
                : key,
              jwt.signature,
            )
          : spec.kty === 'EC'
            ? verify(spec.hash, jwt.signingInput, { key, dsaEncoding: 'ieee-p1363' }, jwt.signature)
            : verify(null, jwt.signingInput, key, jwt.signature);
    } catch {
      ok = false;
    }
    if (ok) return;
  }
  throw new JwtError('bad signature');
}

export interface ClaimChecks {
  issuer: string;
  audience: string;
  /** Seconds of clock difference tolerated (default 60). */
  leewaySeconds?: number;
  now?: number;
}

function checkClaims(claims: Record<string, unknown>, want: ClaimChecks): void {
  const now = Math.floor((want.now ?? Date.now()) / 1000);
  const leeway = want.leewaySeconds ?? 60;
  if (claims.iss !== want.issuer) throw new JwtError(`issuer ${JSON.stringify(claims.iss)} is not trusted`);
  const aud = claims.aud;
  const auds = Array.isArray(aud) ? aud : [aud];
  if (!auds.includes(want.audience)) throw new JwtError(`audience ${JSON.stringify(aud)} is not ours`);
  if (typeof claims.exp !== 'number' || !Number.isFinite(claims.exp)) throw new JwtError('no expiry (exp)');
  if (claims.exp + leeway <= now) throw new JwtError('expired');
  if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || claims.nbf - leeway > now)) {
    throw new JwtError('not yet valid (nbf)');
  }
  if (claims.iat !== undefined && (typeof claims.iat !== 'number' || claims.iat - leeway > now)) {
    throw new JwtError('issued in the future (iat)');
  }
}

/** The claims of a token that the key set signed and that is meant for us, now. */
export function verifyJwt(token: string, keys: KeySet, want: ClaimChecks): Record<string, unknown> {
  const jwt = decodeJwt(token);
  checkSignature(jwt, keys);
  checkClaims(jwt.claims, want);
  return jwt.claims;
}

/** The key id a token names, to tell whether a key set may need fetching again. */
export function tokenKeyId(token: string): string | undefined {
  try {
    const kid = decodeJwt(token).header.kid;
    return typeof kid === 'string' ? kid : undefined;
  } catch {
    return undefined;
  }
}
