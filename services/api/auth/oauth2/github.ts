// Buildbot's GitHubAuth (API v3): consent at <server>/login/oauth/authorize with scope
// `user:email read:org`, the code exchanged at <server>/login/oauth/access_token, then GET
// /user, /user/emails (the primary one is the email) and /user/orgs (the groups), with
// `Authorization: token <token>`. serverURL: GitHub Enterprise, its API at <serverURL>/api/v3.
// apiVersion 4: GraphQL at <api>/graphql (Enterprise: <serverURL>/api/graphql), github-v4.ts.
import { githubV4User } from './github-v4.js';
import type { Provider } from './provider.js';
import { isObject, names, text } from './provider.js';

export function github(o: {
  serverURL?: string | undefined;
  apiVersion: 3 | 4;
  getTeamsMembership: boolean;
}): Provider {
  const server = o.serverURL?.replace(/\/+$/, '');
  const graphql = server ? `${server}/api/graphql` : 'https://api.github.com/graphql';
  return {
    name: 'GitHub',
    faIcon: 'fa-github',
    authUri: `${server ?? 'https://github.com'}/login/oauth/authorize`,
    tokenUri: `${server ?? 'https://github.com'}/login/oauth/access_token`,
    resourceEndpoint: server ? `${server}/api/v3` : 'https://api.github.com',
    authParams: { scope: 'user:email read:org' },
    authorization: (token) => `token ${token}`,
    async userInfo(get, post) {
      if (o.apiVersion === 4) return githubV4User(post, graphql, o.getTeamsMembership);
      const user = await get('/user');
      const emails = await get('/user/emails');
      const primary = Array.isArray(emails)
        ? emails.find((e) => isObject(e) && e.primary === true)
        : undefined;
      const orgs = await get('/user/orgs');
      const fullName = isObject(user) && typeof user.name === 'string' ? user.name : null;
      return {
        full_name: fullName,
        email: primary
          ? text(primary, 'email', 'GitHub /user/emails')
          : ((isObject(user) ? user.email : null) ?? null),
        username: text(user, 'login', 'GitHub /user'),
        groups: names(orgs, 'login', 'GitHub /user/orgs'),
      };
    },
  };
}
