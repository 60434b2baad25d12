// Logging in: HTTP Basic (user and password) or a token, as /auth/login takes them; the
// session cookie it sets is what the API, /ws and this UI then know the person by.
import { useState } from 'preact/hooks';
import { ApiError, authUrl } from '../api.js';
import { ErrorBox } from '../components/common.js';
import { navigate, type Route } from '../router.js';
import { isLoggedIn, loginWithPassword, loginWithToken, useSession } from '../session.js';
import { useTitle } from '../title.js';

export function LoginPage({ route }: { route: Route }) {
  const { config } = useSession();
  useTitle('Log in');
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const next = route.query.get('next') ?? '/';
  const done = () => navigate(`#${next.startsWith('/') ? next : '/'}`);
  const tokens = config?.auth.name === 'OIDC' || config?.auth.token_login === true;
  // An OAuth2 provider (GitHub, GitLab, Google) and an authenticating proxy log in by a page
  // load of auth/login, not a form: the provider's consent page, or the proxy's header.
  const redirectLogin =
    (config?.auth.oauth2 === true && config.auth.name !== 'OIDC') || config?.auth.name === 'RemoteUserAuth';
  const passwords = config?.auth.name !== 'OIDC' && !redirectLogin;
  const attempt = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      done();
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
    } finally {
      setBusy(false);
    }
  };
  if (isLoggedIn(config)) {
    return (
      <main id="main" tabIndex={-1}>
        <h1>Logged in</h1>
        <p>
          You are logged in as {String(config!.user.username)}. <a href={`#${next}`}>Continue</a>
        </p>
      </main>
    );
  }
  return (
    <main id="main" tabIndex={-1}>
      <h1>Log in</h1>
      {config?.auth.name === 'NoAuth' && (
        <p>This Flotilla has no logins configured: everyone may do everything.</p>
      )}
      <ErrorBox error={error} what="logging in" />
      {redirectLogin && (
        <p>
          <a class="button primary" href={authUrl('login', { redirect: next })}>
            {config!.auth.name === 'RemoteUserAuth' ? 'Log in' : `Log in with ${config!.auth.name}`}
          </a>
        </p>
      )}
      {passwords && (
        <form
          class="stack"
          onSubmit={(e) => {
            e.preventDefault();
            const f = e.currentTarget.elements;
            const user = (f.namedItem('username') as HTMLInputElement).value;
            const pass = (f.namedItem('password') as HTMLInputElement).value;
            void attempt(() => loginWithPassword(user, pass));
          }}
        >
          <label>
            User name <input name="username" autoComplete="username" required />
          </label>
          <label>
            Password <input name="password" type="password" autoComplete="current-password" required />
          </label>
          <button type="submit" class="primary" disabled={busy}>
            Log in
          </button>
        </form>
      )}
      {tokens && passwords && <h2 class="small">Or with an access token</h2>}
      {tokens && (
        <form
          class="stack"
          onSubmit={(e) => {
            e.preventDefault();
            const token = (e.currentTarget.elements.namedItem('token') as HTMLInputElement).value.trim();
            void attempt(() => loginWithToken(token));
          }}
        >
          <label>
            Access token <input name="token" type="password" autoComplete="off" required />
          </label>
          <button type="submit" class="primary" disabled={busy}>
            Log in with the token
          </button>
        </form>
      )}
    </main>
  );
}
