// Buildbot's OAuth2 logins (auth.oauth2; buildbot/www/oauth2.py, 3.7), one provider per file in
// the typed map below: a provider the schema names and the map lacks does not compile.
//
// Buildbot facts: GET /auth/login without `code` redirects to the provider's authUri with
// client_id, redirect_uri (<buildbotURL>auth/login), response_type=code, the provider's scope
// and state (the urlencoded `redirect=<fragment>`); the provider sends the browser back to
// /auth/login?code=..&state=..; the code is exchanged by a POST to tokenUri (form: code,
// redirect_uri, grant_type=authorization_code, client_id, client_secret), whose answer is JSON
// or a form; the access token reads the user's info; the session holds it; the browser goes
// to <buildbotURL>#<redirect>. The web UI's settings say {name, oauth2: true, fa_icon,
// autologin}.
// Where we differ: the state also carries a nonce that a cookie of this browser holds
// (HttpOnly, SameSite=Lax, 10 minutes, one use), so a callback this browser did not start is
// refused (403: Buildbot's state carries only the redirect, which lets a foreign page log a
// visitor in as the attacker); the redirect is only ever a fragment of PUBLIC_URL (never
// another site); a provider that refuses or cannot be reached within 10 s is a 502, logged.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthConfig } from '../../../core/config/master-config.js';
import { readSecret } from '../../../core/config/secret-source.js';
import { oauth2Failed, oauth2State } from '../../errors/catalogue.js';
import type { UserInfo } from '../session.js';
import { github } from './github.js';
import { gitlab } from './gitlab.js';
import { google } from './google.js';
import { isObject, type Provider } from './provider.js';

type OAuth2Config = NonNullable<AuthConfig['oauth2']>;
type Providers = { [K in OAuth2Config['provider']]: (cfg: OAuth2Config) => Provider };

const PROVIDERS: Providers = { github, gitlab, google: () => google() };

const STATE_COOKIE = 'flotilla_oauth2_state';
const STATE_SECONDS = 600;
const TIMEOUT_MS = 10_000;

export class OAuth2Login {
  private constructor(
    private readonly provider: Provider,
    private readonly clientId: string,
    private readonly clientSecret: string,
    private readonly loginUri: string,
    private readonly secure: boolean,
    readonly configDict: { name: string; oauth2: true; fa_icon: string; autologin: boolean },
  ) {}

  static fromConfig(
    cfg: OAuth2Config,
    publicUrl: string,
    env: Record<string, string | undefined>,
  ): OAuth2Login {
    const base = PROVIDERS[cfg.provider](cfg);
    const provider = {
      ...base,
      authUri: cfg.authUri ?? base.authUri,
      tokenUri: cfg.tokenUri ?? base.tokenUri,
      resourceEndpoint: (cfg.resourceEndpoint ?? base.resourceEndpoint).replace(/\/+$/, ''),
    };
    const secret = readSecret(
      'auth.oauth2',
      { fromEnv: cfg.clientSecret_env, fromFile: cfg.clientSecret_file },
      env,
    )!;
    return new OAuth2Login(
      provider,
      cfg.clientId,
      secret,
      `${publicUrl.replace(/\/+$/, '')}/auth/login`,
      publicUrl.startsWith('https:'),
      { name: provider.name, oauth2: true, fa_icon: provider.faIcon, autologin: cfg.autologin },
    );
  }

  private stateCookie(value: string, maxAge: number): string {
    return `${STATE_COOKIE}=${value}; Path=/auth/login; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${this.secure ? '; Secure' : ''}`;
  }

  /** Sends the browser to the provider; `redirect` is the fragment to come back to. */
  begin(reply: FastifyReply, redirect: string | null): FastifyReply {
    const nonce = randomBytes(24).toString('base64url');
    const state = new URLSearchParams({ nonce, ...(redirect !== null ? { redirect } : {}) }).toString();
    const params: Record<string, string> = {
      client_id: this.clientId,
      redirect_uri: this.loginUri,
      response_type: 'code',
      state,
      ...this.provider.authParams,
    };
    const sorted = Object.entries(params).sort(([a], [b]) => (a < b ? -1 : 1));
    reply.header('set-cookie', this.stateCookie(nonce, STATE_SECONDS));
    return reply
      .code(302)
      .header('location', `${this.provider.authUri}?${new URLSearchParams(sorted)}`)
      .header('cache-control', 'no-store')
      .send();
  }

  /**
   * The user of a callback (`code`, `state`) this browser started; the redirect to come back to.
   * Throws 403 for a state this browser was not given, 502 when the provider does not confirm.
   */
  async finish(
    req: FastifyRequest,
    reply: FastifyReply,
    code: string,
    state: string,
  ): Promise<{ user: UserInfo; redirect: string | null }> {
    const given = new URLSearchParams(state);
    const nonce = given.get('nonce') ?? '';
    const cookie = /(?:^|;\s*)flotilla_oauth2_state=([^;]*)/.exec(req.headers.cookie ?? '')?.[1] ?? '';
    // One use: the nonce is spent whatever happens next.
    reply.header('set-cookie', this.stateCookie('', 0));
    const a = Buffer.from(nonce);
    const b = Buffer.from(cookie);
    if (!cookie || a.length !== b.length || !timingSafeEqual(a, b)) throw oauth2State();
    try {
      const token = await this.exchange(code);
      const call = async (url: string, authorization: string, init: RequestInit = {}) => {
        const res = await fetch(url, {
          ...init,
          headers: { authorization, 'user-agent': 'Flotilla', accept: 'application/json', ...init.headers },
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
        if (!res.ok) throw new Error(`${url} answered ${res.status}`);
        return res.json();
      };
      const get = (path: string) =>
        call(`${this.provider.resourceEndpoint}${path}`, this.provider.authorization(token));
      // GitHub's GraphQL API (the only POST) documents `Authorization: bearer <token>`.
      const post = (url: string, body: unknown) =>
        call(url, `Bearer ${token}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      return { user: await this.provider.userInfo(get, post), redirect: given.get('redirect') };
    } catch (err) {
      req.log.warn(
        { provider: this.provider.name, reason: (err as Error).message },
        'OAuth2 login not confirmed',
      );
      throw oauth2Failed();
    }
  }

  private async exchange(code: string): Promise<string> {
    const res = await fetch(this.provider.tokenUri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({
        redirect_uri: this.loginUri,
        code,
        grant_type: 'authorization_code',
        client_id: this.clientId,
        client_secret: this.clientSecret,
      }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (!res.ok) throw new Error(`the token endpoint answered ${res.status}`);
    const body = await res.text();
    let content: unknown;
    try {
      content = JSON.parse(body);
    } catch {
      content = Object.fromEntries(new URLSearchParams(body));
    }
    const token = isObject(content) ? content.access_token : undefined;
    if (typeof token !== 'string' || !token) throw new Error('the token endpoint gave no access_token');
    return token;
  }
}
