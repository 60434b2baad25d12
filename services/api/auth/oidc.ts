// Token login (GET /auth/login?token=...): the access token is a JWT the identity provider
// signed; we check it against the provider's key set and map its claims to Buildbot's user
// info. The key set comes from a file (re-read when it changes) or a URL (fetched with a
// timeout, cached, fetched again when a token names a key it lacks, at most once a minute).
import { readFileSync, statSync } from 'node:fs';
import { JwtError, KeySet, tokenKeyId, verifyJwt } from '../../core/auth/jwt.js';
import type { AuthConfig } from '../../core/config/master-config.js';

type OidcConfig = NonNullable<AuthConfig['oidc']>;

const URL_TTL_MS = 10 * 60_000;
const REFRESH_MIN_MS = 60_000;
const FETCH_TIMEOUT_MS = 5_000;
const MAX_JWKS_BYTES = 1024 * 1024;

export interface KeySource {
  /** The key set, fetched again first when `kid` is unknown and a refresh is allowed. */
  keys(kid: string | undefined): Promise<KeySet>;
}

export function fileKeySource(path: string): KeySource {
  let stamp = '';
  let current: KeySet | null = null;
  let checkedAt = 0;
  const load = () => {
    const st = statSync(path);
    const s = `${st.mtimeMs}:${st.size}:${st.ino}`;
    if (s === stamp && current) return current;
    const text = readFileSync(path, 'utf8');
    if (text.length > MAX_JWKS_BYTES) throw new JwtError('the key set file is too large');
    current = KeySet.from(JSON.parse(text));
    stamp = s;
    return current;
  };
  return {
    async keys(kid) {
      const now = Date.now();
      if (!current || (!current.has(kid) && now - checkedAt > 1000) || now - checkedAt > 10_000) {
        checkedAt = now;
        try {
          load();
        } catch (err) {
          if (!current) throw err;
        }
      }
      return current!;
    },
  };
}

export function urlKeySource(url: string, fetchImpl: typeof fetch = fetch): KeySource {
  let current: KeySet | null = null;
  let fetchedAt = 0;
  let inflight: Promise<KeySet> | null = null;
  const refresh = () => {
    inflight ??= (async () => {
      try {
        const res = await fetchImpl(url, {
          signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
          headers: { accept: 'application/json' },
          redirect: 'error',
        });
        if (!res.ok) throw new JwtError(`the key set URL answered ${res.status}`);
        const text = await res.text();
        if (text.length > MAX_JWKS_BYTES) throw new JwtError('the key set is too large');
        current = KeySet.from(JSON.parse(text));
        return current;
      } finally {
        fetchedAt = Date.now();
        inflight = null;
      }
    })();
    return inflight;
  };
  return {
    async keys(kid) {
      const age = Date.now() - fetchedAt;
      const stale = !current || age > URL_TTL_MS || (!current.has(kid) && age > REFRESH_MIN_MS);
      if (stale) {
        try {
          await refresh();
        } catch (err) {
          if (!current) throw err;
        }
      }
      return current!;
    },
  };
}

const MAX_FIELD = 256;
const MAX_GROUPS = 100;

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v.slice(0, MAX_FIELD) : undefined;
}

/** Buildbot's user info from verified claims; bounded, so the session cookie stays small. */
export function userInfoFromClaims(
  claims: Record<string, unknown>,
  cfg: OidcConfig,
): Record<string, unknown> {
  const username = text(claims[cfg.username_claim]) ?? text(claims.sub);
  if (!username) throw new JwtError(`no ${cfg.username_claim} or sub claim`);
  const info: Record<string, unknown> = { username };
  const email = claims.email_verified === false ? undefined : text(claims.email);
  if (email) info.email = email;
  const name = text(claims.name);
  if (name) info.full_name = name;
  const g = claims[cfg.groups_claim];
  const groups = (Array.isArray(g) ? g : typeof g === 'string' ? [g] : [])
    .filter((x): x is string => typeof x === 'string' && x !== '')
    .slice(0, MAX_GROUPS)
    .map((x) => x.slice(0, MAX_FIELD));
  info.groups = groups;
  return info;
}

export class TokenVerifier {
  constructor(
    private readonly cfg: OidcConfig,
    private readonly source: KeySource,
  ) {}

  static fromConfig(cfg: OidcConfig): TokenVerifier {
    return new TokenVerifier(cfg, cfg.jwks_file ? fileKeySource(cfg.jwks_file) : urlKeySource(cfg.jwks_url!));
  }

  /** The user a token speaks for; throws JwtError (or a key set error) otherwise. */
  async verify(token: string, now = Date.now()): Promise<Record<string, unknown>> {
    const keys = await this.source.keys(tokenKeyId(token));
    const claims = verifyJwt(token, keys, { issuer: this.cfg.issuer, audience: this.cfg.audience, now });
    return userInfoFromClaims(claims, this.cfg);
  }
}
