// auth.oauth2 (Buildbot's GitHubAuth, GitLabAuth, GoogleAuth) against a provider on 127.0.0.1
// that refuses (422) every request not shaped as the provider documents it: the consent URL
// the browser is sent to (client_id, redirect_uri, response_type=code, scope, state), the code
// exchange (a form POST with code, grant_type, client_id, client_secret, redirect_uri) and the
// user and groups API with the access token (GitHub's API v4: GraphQL POSTs with the bearer
// token, a request without it refused as GitHub does, 401), the groups giving a role that a
// force rule asks for (GitHub's teams as `org/team`). Then what the review asks of a login: the state
// is bound to the browser (login CSRF), the redirect stays a fragment of PUBLIC_URL (open
// redirect), and a provider that refuses the code starts no session.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Forge, type Received } from '../../helpers/forge.js';
import { AuthApp, claimsOf, PUBLIC_URL, type Reply, sessionOf } from './lib.js';

const CLIENT_ID = 'flotilla-client';
const CLIENT_SECRET = 'client-s3cret';
const CODE = 'consent-code-123';
const ACCESS = 'provider-access-token';
const LOGIN_URI = `${PUBLIC_URL}auth/login`;

interface Case {
  name: string;
  provider: 'github' | 'gitlab' | 'google';
  config: (url: string) => Record<string, unknown>;
  authorize: string;
  token: string;
  api: Record<string, unknown>;
  authorization: string;
  scope: string | null;
  user: Record<string, unknown>;
  /** The groups that give the role `releasers`, whom the force rule allows. */
  releasers: string[];
  /** GitHub API v4: the answer to a GraphQL query, and the API requests a login makes. */
  graphql?: (query: string) => unknown;
  calls?: string[];
}

const GRAPHQL = '/api/graphql';
// GitHub's GraphQL fields of an organization's teams: `<alias>: organization(login: "<org>")
// { teams(first: 100, userLogins: ["<user>"]) ...`; an alias GraphQL takes starts with a letter or _.
const TEAMS_FIELD =
  /(\S+): organization\(login: "([^"]*)"\) \{\s*teams\(first: 100,? userLogins: \["([^"]*)"\]\)/g;
const ORGS = ['octo-org', 'locked-org'];

function githubGraphql(query: string): unknown {
  if (/^query \{\s*viewer \{/.test(query)) {
    const edges = ORGS.map((login) => ({ node: { login } }));
    return {
      data: {
        viewer: {
          email: 'octocat@example.org',
          login: 'octocat',
          name: 'The Octocat',
          organizations: { edges },
        },
      },
    };
  }
  const data: Record<string, unknown> = {};
  for (const [, alias, org] of query.matchAll(TEAMS_FIELD)) {
    // locked-org restricts OAuth Apps: GitHub answers null for it (and an error beside).
    data[alias!] =
      org === 'locked-org'
        ? null
        : {
            teams: {
              edges: [
                { node: { name: 'Release Engineers', slug: 'release-engineers' } },
                { node: { name: 'docs', slug: 'docs' } },
              ],
            },
          };
  }
  return { data };
}

/** What GitHub's GraphQL API would refuse in a query of the viewer or of its organizations' teams. */
function graphqlProblems(body: unknown): string[] {
  const query = typeof body === 'object' && body !== null ? (body as { query?: unknown }).query : undefined;
  if (typeof query !== 'string') return ['a JSON body {"query": ...}'];
  if (/^query \{\s*viewer \{/.test(query)) {
    return /organizations\(first: 100\) \{\s*edges \{\s*node \{\s*login/.test(query) ? [] : ['viewer fields'];
  }
  const fields = [...query.matchAll(TEAMS_FIELD)];
  const out: string[] = [];
  if (!query.startsWith('query getOrgTeamMembership {')) out.push('a query');
  if (fields.map((f) => f[2]).join() !== ORGS.join()) out.push("the viewer's organizations");
  for (const [, alias, , login] of fields) {
    if (!/^[_A-Za-z][_0-9A-Za-z]*$/.test(alias!)) out.push(`alias ${alias}`);
    if (login !== 'octocat') out.push('userLogins');
  }
  if ((query.match(/node \{\s*name\s*,?\s*slug\s*\}/g) ?? []).length !== fields.length)
    out.push('name, slug');
  return out;
}

/** GitHub's GraphQL answers 401 to a request without `Authorization: bearer <token>`, else 200. */
const graphqlStatus = (r: Omit<Received, 'status' | 'problems'>) =>
  new URL(r.url, 'http://p').pathname !== GRAPHQL
    ? undefined
    : /^bearer provider-access-token$/i.test(String(r.headers.authorization ?? ''))
      ? 200
      : 401;

const CASES: Case[] = [
  {
    name: 'github',
    provider: 'github',
    config: (url) => ({ serverURL: url }),
    authorize: '/login/oauth/authorize',
    token: '/login/oauth/access_token',
    api: {
      '/api/v3/user': { login: 'octocat', name: 'The Octocat', email: null },
      '/api/v3/user/emails': [
        { email: 'old@example.org', primary: false, verified: true },
        { email: 'octocat@example.org', primary: true, verified: true },
      ],
      '/api/v3/user/orgs': [{ login: 'octo-org' }, { login: 'release-team' }],
    },
    authorization: `token ${ACCESS}`,
    scope: 'user:email read:org',
    user: {
      username: 'octocat',
      full_name: 'The Octocat',
      email: 'octocat@example.org',
      groups: ['octo-org', 'release-team'],
    },
    releasers: ['release-team'],
  },
  {
    name: 'github API v4 with teams',
    provider: 'github',
    config: (url) => ({ serverURL: url, apiVersion: 4, getTeamsMembership: true }),
    authorize: '/login/oauth/authorize',
    token: '/login/oauth/access_token',
    api: {},
    authorization: `Bearer ${ACCESS}`,
    scope: 'user:email read:org',
    user: {
      username: 'octocat',
      full_name: 'The Octocat',
      email: 'octocat@example.org',
      groups: [...ORGS, 'octo-org/Release Engineers', 'octo-org/docs', 'octo-org/release-engineers'],
    },
    // A team only: the organization alone gives no role.
    releasers: ['octo-org/release-engineers'],
    graphql: githubGraphql,
    calls: [GRAPHQL, GRAPHQL],
  },
  {
    name: 'gitlab',
    provider: 'gitlab',
    config: (url) => ({ instanceUri: url }),
    authorize: '/oauth/authorize',
    token: '/oauth/token',
    api: {
      '/api/v4/user': {
        username: 'jsmith',
        name: 'John Smith',
        email: 'john@example.com',
        avatar_url: 'http://a/x.png',
      },
      '/api/v4/groups': [{ path: 'infra' }, { path: 'web' }],
    },
    authorization: `Bearer ${ACCESS}`,
    scope: null,
    user: {
      username: 'jsmith',
      full_name: 'John Smith',
      email: 'john@example.com',
      groups: ['infra', 'web'],
    },
    releasers: ['infra'],
  },
  {
    name: 'google',
    provider: 'google',
    config: (url) => ({
      authUri: `${url}/o/oauth2/auth`,
      tokenUri: `${url}/o/oauth2/token`,
      resourceEndpoint: `${url}/oauth2/v1`,
    }),
    authorize: '/o/oauth2/auth',
    token: '/o/oauth2/token',
    api: { '/oauth2/v1/userinfo': { email: 'ada@example.org', name: 'Ada L', picture: 'http://p/ada.png' } },
    authorization: `Bearer ${ACCESS}`,
    scope: 'https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/userinfo.profile',
    user: { username: 'ada', full_name: 'Ada L', email: 'ada@example.org', groups: [] },
    releasers: [],
  },
];

/** What is wrong with a request, as the provider's documentation has it. */
function problems(c: Case, r: Omit<Received, 'status' | 'problems'>): string[] {
  const url = new URL(r.url, 'http://provider');
  const out: string[] = [];
  const expect = (what: string, ok: boolean) => ok || out.push(what);
  if (url.pathname === c.authorize) {
    const q = url.searchParams;
    expect('GET', r.method === 'GET');
    expect('client_id', q.get('client_id') === CLIENT_ID);
    expect('redirect_uri', q.get('redirect_uri') === LOGIN_URI);
    expect('response_type=code', q.get('response_type') === 'code');
    expect('state', (q.get('state') ?? '').length > 20);
    if (c.scope !== null) expect('scope', q.get('scope') === c.scope);
  } else if (url.pathname === c.token) {
    const form = new URLSearchParams(r.raw);
    expect('POST', r.method === 'POST');
    expect('form', String(r.headers['content-type']).startsWith('application/x-www-form-urlencoded'));
    expect('code', form.get('code') === CODE);
    expect('grant_type', form.get('grant_type') === 'authorization_code');
    expect('client_id', form.get('client_id') === CLIENT_ID);
    expect('client_secret', form.get('client_secret') === CLIENT_SECRET);
    expect('redirect_uri', form.get('redirect_uri') === LOGIN_URI);
  } else if (c.graphql && url.pathname === GRAPHQL) {
    expect('POST', r.method === 'POST');
    expect('JSON', String(r.headers['content-type']).startsWith('application/json'));
    out.push(...graphqlProblems(r.body));
  } else {
    expect(`path ${url.pathname}`, url.pathname in c.api);
    expect('GET', r.method === 'GET');
    expect('the access token', r.headers.authorization === c.authorization);
  }
  return out;
}

const cookieOf = (a: Reply, name: string) =>
  a.cookies.map((c) => new RegExp(`^${name}=([^;]*)`).exec(c)?.[1]).find((v) => v !== undefined);

describe.each(CASES)('$name', (c) => {
  let provider: Forge;
  let api: AuthApp;
  beforeAll(async () => {
    provider = await Forge.start(
      (r) => problems(c, r),
      (r) => {
        const path = new URL(r.url, 'http://provider').pathname;
        if (path === c.authorize) return { code: CODE };
        if (path === c.token) return { access_token: ACCESS, token_type: 'bearer', scope: c.scope ?? 'api' };
        if (c.graphql && path === GRAPHQL) return c.graphql((r.body as { query: string }).query);
        return c.api[path];
      },
    );
    provider.fail = graphqlStatus;
    process.env.OAUTH2_TEST_SECRET = CLIENT_SECRET;
    api = await AuthApp.start({
      auth: {
        oauth2: {
          provider: c.provider,
          clientId: CLIENT_ID,
          clientSecret_env: 'OAUTH2_TEST_SECRET',
          ...c.config(provider.url),
        },
        role_matchers: [{ role: 'releasers', groups: c.releasers }],
        allow_rules: [{ match: 'force', roles: ['releasers'] }],
      },
    });
  });
  afterAll(async () => {
    await api?.close();
    await provider?.close();
  });

  /** The browser's part: to /auth/login, to the provider's consent page, and back with the code. */
  async function consent(redirect = '/builders') {
    const start = await api.get(`/auth/login?redirect=${encodeURIComponent(redirect)}`);
    expect(start.status).toBe(302);
    const location = new URL(String(start.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe(`${provider.url}${c.authorize}`);
    const page = await fetch(location);
    expect(page.status).toBe(200);
    return { state: location.searchParams.get('state')!, nonce: cookieOf(start, 'flotilla_oauth2_state')! };
  }

  const callback = (state: string, nonce: string | null, headers: Record<string, string> = {}) =>
    api.get(`/auth/login?code=${CODE}&state=${encodeURIComponent(state)}`, {
      headers: { ...(nonce !== null ? { cookie: `flotilla_oauth2_state=${nonce}` } : {}), ...headers },
    });

  it('logs in: consent, code exchange, user and groups, session, back to PUBLIC_URL#<redirect>', async () => {
    provider.received.length = 0;
    const { state, nonce } = await consent();
    // A navigation from the provider's site: cross-site, and let through for its state.
    const back = await callback(state, nonce, { 'sec-fetch-site': 'cross-site' });
    expect([back.status, back.headers.location]).toEqual([302, `${PUBLIC_URL}#/builders`]);
    // Each documented request, once, none refused (a 422 would name what was wrong).
    expect(provider.received.map((r) => [new URL(r.url, 'http://p').pathname, r.problems])).toEqual(
      [c.authorize, c.token, ...(c.calls ?? Object.keys(c.api))].map((path) => [path, []]),
    );
    expect(claimsOf(sessionOf(back)!).user_info).toMatchObject(c.user);
    const config = (await api.get('/config', { session: sessionOf(back)! })).json();
    expect(config.auth).toMatchObject({ oauth2: true, autologin: false });
    expect(config.roles.includes('releasers')).toBe(c.provider !== 'google');
    // The force rule asks for `releasers`: the provider's groups (a GitHub team) give it.
    const forced = await api.rpc(
      '/forceschedulers/force-runtests',
      'force',
      {},
      { session: sessionOf(back)! },
    );
    expect(forced.status).toBe(c.provider !== 'google' ? 200 : 403);
  });

  it.runIf(c.graphql)('GitHub GraphQL: a request without the bearer token is refused, 401', async () => {
    // A well-formed query: only the token is missing.
    const query = JSON.stringify({
      query:
        'query {\n  viewer {\n    organizations(first: 100) {\n      edges {\n        node {\n          login\n        }\n      }\n    }\n  }\n}',
    });
    const post = (headers: Record<string, string>) =>
      fetch(`${provider.url}${GRAPHQL}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: query,
      });
    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: 'bearer wrong' })).status).toBe(401);
    expect((await post({ authorization: `bearer ${ACCESS}` })).status).toBe(200);
  });

  it('login CSRF: a callback this browser did not start is refused, and the code is not spent', async () => {
    const { state } = await consent();
    provider.received.length = 0;
    const attacker = await consent();
    for (const [s, n] of [
      [state, null],
      [state, attacker.nonce],
      ['redirect=%2F', attacker.nonce],
    ] as const) {
      const r = await callback(s, n);
      expect(r.status).toBe(403);
      expect(sessionOf(r) && claimsOf(sessionOf(r)!).user_info.username).toBeFalsy();
    }
    expect(provider.received.filter((r) => r.url.startsWith(c.token))).toEqual([]);
  });

  it('open redirect: whatever the redirect says, the browser goes back to PUBLIC_URL', async () => {
    for (const target of [
      '//evil.example.org/x',
      'https://evil.example.org/',
      '/ok\r\nLocation: https://evil',
    ]) {
      const { state, nonce } = await consent(target);
      const back = await callback(state, nonce);
      expect(back.status).toBe(302);
      expect(String(back.headers.location).startsWith(`${PUBLIC_URL}#`)).toBe(true);
      expect(String(back.headers.location)).not.toMatch(/[\r\n]/);
    }
  });

  it('a provider that refuses the code: 502, no session', async () => {
    const { state, nonce } = await consent();
    provider.fail = (r) => (r.url.startsWith(c.token) ? 401 : undefined);
    const r = await callback(state, nonce);
    provider.fail = graphqlStatus;
    expect(r.status).toBe(502);
    expect(sessionOf(r) && claimsOf(sessionOf(r)!).user_info.username).toBeFalsy();
  });
});
