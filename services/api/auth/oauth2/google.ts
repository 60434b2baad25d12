// Buildbot's GoogleAuth: consent at accounts.google.com/o/oauth2/auth with the userinfo.email
// and userinfo.profile scopes, the code exchanged at accounts.google.com/o/oauth2/token, then
// GET www.googleapis.com/oauth2/v1/userinfo: the user name is the email's local part, the
// full name `name`, the avatar `picture`; no groups. The token goes in the Authorization:
// Bearer header (Buildbot: ?access_token=).
import type { Provider } from './provider.js';
import { isObject, text } from './provider.js';

export function google(): Provider {
  return {
    name: 'Google',
    faIcon: 'fa-google-plus',
    authUri: 'https://accounts.google.com/o/oauth2/auth',
    tokenUri: 'https://accounts.google.com/o/oauth2/token',
    resourceEndpoint: 'https://www.googleapis.com/oauth2/v1',
    authParams: {
      scope:
        'https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/userinfo.profile',
    },
    authorization: (token) => `Bearer ${token}`,
    async userInfo(get) {
      const data = await get('/userinfo');
      const email = text(data, 'email', 'Google /userinfo');
      return {
        full_name: text(data, 'name', 'Google /userinfo'),
        username: email.split('@')[0]!,
        email,
        avatar_url: isObject(data) ? (data.picture ?? null) : null,
        groups: [],
      };
    },
  };
}
