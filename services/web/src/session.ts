// Who the person is: /config's user, roles and permissions (what the authz rules allow,
// which decides the buttons shown), and logging in and out through /auth.
import type { UiAction, UiConfig } from '../../core/api-shapes.js';
import { ApiError } from './api.js';
import { events } from './events.js';
import { useFollow } from './subscribers.js';

let current: UiConfig | null = null;
let failure: ApiError | null = null;
const listeners = new Set<() => void>();

function changed(): void {
  for (const fn of listeners) fn();
}

export async function loadSession(): Promise<void> {
  try {
    const res = await fetch('config', {
      headers: { accept: 'application/json' },
      credentials: 'same-origin',
    });
    if (!res.ok) throw new ApiError(res.status, (await res.text()) || res.statusText);
    current = (await res.json()) as UiConfig;
    failure = null;
  } catch (err) {
    failure = err instanceof ApiError ? err : new ApiError(0, 'the server cannot be reached');
  }
  changed();
}

export function useSession(): { config: UiConfig | null; error: ApiError | null } {
  useFollow(listeners);
  return { config: current, error: failure };
}

export function isLoggedIn(c: UiConfig | null): boolean {
  return !!c && !c.user.anonymous && typeof c.user.username === 'string';
}

/** Whether to offer a button: the rules may allow the action to this user. */
export function can(c: UiConfig | null, action: UiAction): boolean {
  return !!c && c.permissions[action] !== false;
}

async function authCall(url: string, headers: Record<string, string> = {}): Promise<void> {
  // The answer is a redirect to the UI: not followed, the cookie it sets is what counts.
  // Marked as the page's script, a refusal comes without `WWW-Authenticate`: the browser
  // would answer that challenge with its own credentials prompt, over this form, for good.
  const res = await fetch(url, {
    headers: { ...headers, 'x-requested-with': 'XMLHttpRequest' },
    credentials: 'same-origin',
    redirect: 'manual',
  });
  if (res.type !== 'opaqueredirect' && !res.ok) {
    const text = (await res.text()).trim();
    let message = text;
    try {
      const e = (JSON.parse(text) as { error?: unknown }).error;
      if (typeof e === 'string') message = e;
    } catch {
      // plain text
    }
    throw new ApiError(
      res.status,
      res.status === 401 ? 'wrong user name, password or token' : message || res.statusText,
    );
  }
  await loadSession();
  events.restart();
}

export function loginWithPassword(username: string, password: string): Promise<void> {
  const bytes = new TextEncoder().encode(`${username}:${password}`);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return authCall('auth/login', { authorization: `Basic ${btoa(bin)}` });
}

export function loginWithToken(token: string): Promise<void> {
  return authCall('auth/login', { authorization: `Bearer ${token}` });
}

export function logout(): Promise<void> {
  return authCall('auth/logout');
}
