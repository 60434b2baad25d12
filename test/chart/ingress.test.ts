// One Ingress carries everything to the API pods, websockets and event streams included:
// /api, /ws, /sse, /auth, /change_hook and /assets (and / and /config exactly) go to the api Service, with proxy timeouts long
// enough for connections that stay open, and TLS when asked.
import { beforeAll, describe, expect, it } from 'vitest';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, type K8sObject, render } from './lib/helm.js';
import { named, ofKind } from './lib/objects.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

const PATHS = ['/api', '/ws', '/sse', '/auth', '/change_hook', '/assets'];
// Buildbot's settings, and the web UI's page (its files are under /assets).
const EXACT = ['/config', '/'];
const TIMEOUTS = [
  'nginx.ingress.kubernetes.io/proxy-read-timeout',
  'nginx.ingress.kubernetes.io/proxy-send-timeout',
];
// Proxies cut an idle connection after about a minute by default; websockets need far more.
const MIN_TIMEOUT_SECONDS = 3600;

/** What keeps this Ingress from carrying the API, websockets and event streams. */
function ingressProblems(ingress: K8sObject, apiService: K8sObject): string[] {
  const problems: string[] = [];
  const routes = new Map<string, any>();
  for (const rule of ingress.spec.rules) for (const p of rule.http.paths) routes.set(p.path, p);
  const port = apiService.spec.ports[0];
  for (const path of [...PATHS, ...EXACT]) {
    const route = routes.get(path);
    if (!route) {
      problems.push(`${path} is not routed`);
      continue;
    }
    const type = EXACT.includes(path) ? 'Exact' : 'Prefix';
    if (route.pathType !== type) problems.push(`${path} is not ${type}`);
    const backend = route.backend.service;
    if (backend.name !== apiService.metadata.name) problems.push(`${path} goes to ${backend.name}`);
    if (backend.port.name !== port.name && backend.port.number !== port.port)
      problems.push(`${path}: wrong port`);
  }
  for (const a of TIMEOUTS) {
    const seconds = Number(ingress.metadata.annotations?.[a]);
    if (!(seconds >= MIN_TIMEOUT_SECONDS)) problems.push(`${a} is ${ingress.metadata.annotations?.[a]}`);
  }
  return problems;
}

describe('the production ingress', () => {
  const objects = () => render([CI_VALUES[1]!]);
  const ingressOf = (o: K8sObject[]) => named(o, 'Ingress', 'flotilla-prod');
  const api = (o: K8sObject[]) => named(o, 'Service', 'flotilla-prod-api');

  it('is the only Ingress, and routes every public path (websockets too) to the api Service', () => {
    const o = objects();
    expect(ofKind(o, 'Ingress')).toHaveLength(1);
    expect(ingressProblems(ingressOf(o), api(o))).toEqual([]);
  });

  it('keeps health and metrics endpoints private', () => {
    const paths = ingressOf(objects()).spec.rules.flatMap((r: any) => r.http.paths.map((p: any) => p.path));
    expect(paths.sort()).toEqual([...PATHS, ...EXACT].sort());
  });

  it('terminates TLS for its host, with the class and extra annotations asked for', () => {
    const ingress = ingressOf(objects());
    expect(ingress.spec.tls).toEqual([
      { hosts: ['flotilla.example.com'], secretName: 'flotilla-example-com-tls' },
    ]);
    expect(ingress.spec.rules[0].host).toBe('flotilla.example.com');
    expect(ingress.spec.ingressClassName).toBe('nginx');
    expect(ingress.metadata.annotations['cert-manager.io/cluster-issuer']).toBe('letsencrypt');
  });

  it('gives the API its public https URL', () => {
    const container = named(objects(), 'Deployment', 'flotilla-prod-api').spec.template.spec.containers[0];
    expect(container.env).toContainEqual({ name: 'PUBLIC_URL', value: 'https://flotilla.example.com/' });
  });
});

describe('ingress options', () => {
  it('is off by default', () => {
    expect(ofKind(render([CI_VALUES[0]!]), 'Ingress')).toEqual([]);
  });

  it('works without TLS or a host, with the default timeouts', () => {
    const o = render([CI_VALUES[0]!, { ingress: { enabled: true } }]);
    const ingress = named(o, 'Ingress', 'flotilla-ci');
    expect(ingress.spec.tls).toBeUndefined();
    expect(ingress.spec.rules[0].host).toBeUndefined();
    expect(ingressProblems(ingress, named(o, 'Service', 'flotilla-ci-api'))).toEqual([]);
  });
});

describe('the ingress check', () => {
  const base = () => {
    const o = render([CI_VALUES[1]!]);
    return { ingress: named(o, 'Ingress', 'flotilla-prod'), api: named(o, 'Service', 'flotilla-prod-api') };
  };

  it('notices a missing websocket route and a short timeout', () => {
    const { ingress, api } = base();
    ingress.spec.rules[0].http.paths = ingress.spec.rules[0].http.paths.filter((p: any) => p.path !== '/ws');
    ingress.metadata.annotations[TIMEOUTS[0]!] = '60';
    expect(ingressProblems(ingress, api)).toEqual([
      '/ws is not routed',
      'nginx.ingress.kubernetes.io/proxy-read-timeout is 60',
    ]);
  });

  it('notices a route to the wrong Service and missing timeouts', () => {
    const { ingress, api } = base();
    ingress.spec.rules[0].http.paths.find((p: any) => p.path === '/sse').backend.service.name = 'other';
    delete ingress.metadata.annotations[TIMEOUTS[1]!];
    expect(ingressProblems(ingress, api)).toEqual([
      '/sse goes to other',
      'nginx.ingress.kubernetes.io/proxy-send-timeout is undefined',
    ]);
  });
});
