// Hash routes, as Buildbot's UI has them (`#/builders/1/builds/2`): a deep link or a reload
// asks the server for `/` alone, and the route and its query (page, filters, a log line)
// live in the hash, so every view is a link and a reload keeps it.
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  name: RouteName;
  params: Record<string, string>;
  query: URLSearchParams;
}

export type RouteName =
  | 'home'
  | 'builders'
  | 'builder'
  | 'build'
  | 'buildById'
  | 'log'
  | 'workers'
  | 'worker'
  | 'projects'
  | 'buildrequests'
  | 'buildrequest'
  | 'schedulers'
  | 'masters'
  | 'changesources'
  | 'about'
  | 'settings'
  | 'tokens'
  | 'change'
  | 'changes'
  | 'grid'
  | 'console'
  | 'waterfall'
  | 'login'
  | 'notFound';

const ROUTES: [RouteName, RegExp, string[]][] = [
  ['home', /^\/?$/, []],
  ['builders', /^\/builders$/, []],
  ['builder', /^\/builders\/(\d+)$/, ['builderid']],
  ['build', /^\/builders\/(\d+)\/builds\/(\d+)$/, ['builderid', 'number']],
  [
    'log',
    /^\/builders\/(\d+)\/builds\/(\d+)\/steps\/(\d+)\/logs\/([^/]+)$/,
    ['builderid', 'number', 'step', 'slug'],
  ],
  ['buildById', /^\/builds\/(\d+)$/, ['buildid']],
  ['workers', /^\/workers$/, []],
  ['projects', /^\/projects$/, []],
  ['worker', /^\/workers\/(\d+)$/, ['workerid']],
  ['buildrequests', /^\/buildrequests$/, []],
  ['buildrequest', /^\/buildrequests\/(\d+)$/, ['buildrequestid']],
  ['schedulers', /^\/schedulers$/, []],
  ['masters', /^\/masters$/, []],
  ['changesources', /^\/changesources$/, []],
  ['about', /^\/about$/, []],
  ['settings', /^\/settings$/, []],
  ['tokens', /^\/settings\/tokens$/, []],
  ['change', /^\/changes\/(\d+)$/, ['changeid']],
  ['changes', /^\/changes$/, []],
  ['grid', /^\/grid$/, []],
  ['console', /^\/console$/, []],
  ['waterfall', /^\/waterfall$/, []],
  ['login', /^\/login$/, []],
];

export function parseHash(hash: string): Route {
  const h = hash.replace(/^#/, '');
  const q = h.indexOf('?');
  const path = q < 0 ? h : h.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : h.slice(q + 1));
  for (const [name, re, names] of ROUTES) {
    const m = re.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    names.forEach((n, i) => {
      params[n] = decodeURIComponent(m[i + 1]!);
    });
    return { name, params, query };
  }
  return { name: 'notFound', params: { path }, query };
}

/** A link's href: `#/path?query`, without empty query values. */
export function href(path: string, query: Record<string, string | number | null | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query))
    if (v !== null && v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return `#${path}${s ? `?${s}` : ''}`;
}

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else location.hash = to.replace(/^#/, '');
  if (replace) window.dispatchEvent(new HashChangeEvent('hashchange'));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}
