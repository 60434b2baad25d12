// API tokens (`#/settings/tokens`): the logged-in user's tokens for scripts, made with a
// name, an expiry and some of the user's roles, listed and revoked, through /api/v2/tokens
// (services/api/http/token-requests.ts). A new token is shown once, with how to use it.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, apiUrl, getPage, rpc } from '../api.js';
import { ErrorBox } from '../components/common.js';
import { timestamp } from '../format.js';
import { href } from '../router.js';
import { isLoggedIn, useSession } from '../session.js';
import { useTitle } from '../title.js';

interface Token {
  tokenid: number;
  name: string;
  roles: string[];
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

interface Created {
  tokenid: number;
  name: string;
  token: string;
}

const LIFETIMES: [days: number, label: string][] = [
  [7, '7 days'],
  [30, '30 days'],
  [90, '90 days'],
  [365, '1 year'],
];

const stateOf = (t: Token, now: number) =>
  t.revoked_at !== null ? 'revoked' : t.expires_at <= now ? 'expired' : 'live';

const asApiError = (err: unknown) => (err instanceof ApiError ? err : new ApiError(0, String(err)));

export function TokensPage() {
  useTitle('API tokens');
  const { config } = useSession();
  const loggedIn = isLoggedIn(config);
  const [tokens, setTokens] = useState<Token[] | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [created, setCreated] = useState<Created | null>(null);
  const [busy, setBusy] = useState(false);
  const [name, setName] = useState('');
  const [days, setDays] = useState(30);
  const [roles, setRoles] = useState<string[] | null>(null);
  const own = config?.roles ?? [];
  const chosen = roles ?? own;

  const reload = () =>
    getPage<Token>('tokens', 'tokens', { limit: 1000 }).then(
      (p) => setTokens(p.items),
      (err) => setError(asApiError(err)),
    );
  useEffect(() => {
    if (loggedIn) void reload();
  }, [loggedIn]);

  const act = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      await reload();
    } catch (err) {
      setError(asApiError(err));
    } finally {
      setBusy(false);
    }
  };

  if (!loggedIn) {
    return (
      <main id="main" tabIndex={-1}>
        <h1>API tokens</h1>
        <p>
          <a href={href('/login', { next: '/settings/tokens' })}>Log in</a> to make tokens for your scripts.
        </p>
      </main>
    );
  }
  const now = Math.floor(Date.now() / 1000);
  const origin = new URL(apiUrl('builds', { limit: 1 }), location.href).toString();
  return (
    <main id="main" tabIndex={-1}>
      <h1>API tokens</h1>
      <p class="muted">
        A script sends a token as <code>Authorization: Bearer …</code> and acts as you, with the roles you
        give it. A token is shown once, when it is made.
      </p>
      <ErrorBox error={error} what="managing API tokens" />
      {created && (
        <section class="card" aria-labelledby="new-token">
          <h2 id="new-token">New token: {created.name}</h2>
          <p>Copy it now: it is not shown again.</p>
          <pre data-testid="new-token">{created.token}</pre>
          <p class="muted">For example:</p>
          <pre>{`curl -H 'Authorization: Bearer ${created.token}' '${origin}'`}</pre>
        </section>
      )}
      <section class="card">
        <h2>Make a token</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void act(async () => {
              const expires_at = now + days * 86_400;
              // Untouched, the API's default: every role of the user's, owners' ones included.
              const r = (await rpc('tokens', 'create', {
                name,
                expires_at,
                ...(roles ? { roles } : {}),
              })) as Created;
              setCreated(r);
              setName('');
            });
          }}
        >
          <label>
            Name{' '}
            <input
              value={name}
              required
              maxLength={100}
              onInput={(e) => setName((e.target as HTMLInputElement).value)}
            />
          </label>{' '}
          <label>
            Expires in{' '}
            <select
              value={String(days)}
              onChange={(e) => setDays(Number((e.target as HTMLSelectElement).value))}
            >
              {LIFETIMES.map(([d, label]) => (
                <option key={d} value={String(d)}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          {own.length > 0 && (
            <fieldset>
              <legend>Roles</legend>
              {own.map((r) => (
                <label key={r}>
                  <input
                    type="checkbox"
                    checked={chosen.includes(r)}
                    onChange={(e) => {
                      const on = (e.target as HTMLInputElement).checked;
                      setRoles(on ? [...chosen, r] : chosen.filter((x) => x !== r));
                    }}
                  />{' '}
                  {r}
                </label>
              ))}
            </fieldset>
          )}
          <button type="submit" disabled={busy}>
            Make token
          </button>
        </form>
      </section>
      <section class="card">
        <h2>Your tokens</h2>
        {tokens?.length === 0 && <p class="muted">None yet.</p>}
        {tokens && tokens.length > 0 && (
          <table data-testid="tokens">
            <thead>
              <tr>
                <th>Name</th>
                <th>Roles</th>
                <th>Made</th>
                <th>Expires</th>
                <th>State</th>
                <th>
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((t) => {
                const state = stateOf(t, now);
                return (
                  <tr key={t.tokenid}>
                    <td>{t.name}</td>
                    <td>{t.roles.join(', ') || '(none)'}</td>
                    <td>{timestamp(t.created_at)}</td>
                    <td>{timestamp(t.expires_at)}</td>
                    <td>{state === 'revoked' ? `revoked ${timestamp(t.revoked_at)}` : state}</td>
                    <td>
                      {state === 'live' && (
                        <button
                          type="button"
                          disabled={busy}
                          aria-label={`Revoke ${t.name}`}
                          onClick={() => {
                            if (!confirm(`Revoke ${t.name}? Scripts using it are refused at once.`)) return;
                            void act(async () => {
                              await rpc(`tokens/${t.tokenid}`, 'revoke');
                            });
                          }}
                        >
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </section>
    </main>
  );
}
