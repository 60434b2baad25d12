// Buildbot's GitLabAuth: consent at <instanceUri>/oauth/authorize, the code exchanged at
// <instanceUri>/oauth/token, then GET <instanceUri>/api/v4/user and /api/v4/groups (their
// `path`s are the groups). Buildbot passes the token as ?access_token=; GitLab documents the
// Authorization: Bearer header too, which keeps it out of access logs: that is what is sent.
import type { Provider } from './provider.js';
import { isObject, names, text } from './provider.js';

export function gitlab(o: { instanceUri?: string | undefined }): Provider {
  const uri = o.instanceUri!.replace(/\/+$/, '');
  return {
    name: 'GitLab',
    faIcon: 'fa-git',
    authUri: `${uri}/oauth/authorize`,
    tokenUri: `${uri}/oauth/token`,
    resourceEndpoint: `${uri}/api/v4`,
    authParams: {},
    authorization: (token) => `Bearer ${token}`,
    async userInfo(get) {
      const user = await get('/user');
      const groups = await get('/groups');
      return {
        full_name: text(user, 'name', 'GitLab /user'),
        username: text(user, 'username', 'GitLab /user'),
        email: text(user, 'email', 'GitLab /user'),
        avatar_url: isObject(user) ? (user.avatar_url ?? null) : null,
        groups: names(groups, 'path', 'GitLab /groups'),
      };
    },
  };
}
