// Two Ingresses carry everything to the API pods: `<release>` for /api, /auth,
// /change_hook and /assets (and / and /config exactly), with the controller's usual timeouts and buffering,
// and `<release>-streaming` for the long-lived /ws and /sse, with proxy timeouts long
// enough for connections that stay open and no buffering. TLS when asked.
import { beforeAll, describe, expect, it } from 'vitest';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, type K8sObject, render } from './lib/helm.js';
import { named, ofKind } from './lib/objects.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

const API_PATHS = ['/api', '/auth', '/change_hook', '/assets'];
const STREAM_PATHS = ['/ws', '/sse'];
const EXACT = ['/config', '/'];
const TIMEOUTS = [
  'nginx.ingress.kubernetes.io/proxy-read-timeout',
  'nginx.ingress.kubernetes.io/proxy-send-timeout',
];
const BUFFERING = 'nginx.ingress.kubernetes.io/proxy-buffering';
// Proxies cut an idle connection after about a minute by default; websockets need far more.
const MIN_TIMEOUT_SECONDS = 3600;

function routesOf(ingress: K8sObject): Map<string, any> {
  const routes = new Map<string, any>();
  for (const rule of ingress.spec.rules) for (const p of rule.http.paths) routes.set(p.path, p);
  return routes;
}

/** What keeps this pair of Ingresses from carrying the API, and websockets and events apart. */
function ingressProblems(api: K8sObject, streaming: K8sObject, apiService: K8sObject): string[] {
  const problems: string[] = [];
  const port = apiService.spec.ports[0];
  const check = (ingress: K8sObject, paths: string[]) => {
    const routes = routesOf(ingress);
    for (const path of paths) {
      const route = routes.get(path);
      if (!route) {
        problems.push(`${path} is not routed by ${ingress.metadata.name}`);
        continue;
      }
      const type = EXACT.includes(path) ? 'Exact' : 'Prefix';
      if (route.pathType !== type) problems.push(`${path} is not ${type}`);
      const backend = route.backend.service;
      if (backend.name !== apiService.metadata.name) problems.push(`${path} goes to ${backend.name}`);
      if (backend.port.name !== port.name && backend.port.number !== port.port)
        problems.push(`${path}: wrong port`);
    }
    for (const path of routes.keys())
      if (!paths.includes(path)) problems.push(`${ingress.metadata.name} also routes ${path}`);
  };
  check(api, [...API_PATHS, ...EXACT]);
  check(streaming, STREAM_PATHS);
  for (const a of TIMEOUTS) {
    const seconds = Number(streaming.metadata.annotations?.[a]);
    if (!(seconds >= MIN_TIMEOUT_SECONDS))
      problems.push(`streaming ${a} is ${streaming.metadata.annotations?.[a]}`);
    if (api.metadata.annotations?.[a] !== undefined) problems.push(`api ${a} is set`);
  }
  if (streaming.metadata.annotations?.[BUFFERING] !== 'off') problems.push('streaming buffering is on');
  if (api.metadata.annotations?.[BUFFERING] !== undefined) problems.push('api buffering is set');
  return problems;
}

describe('the production ingresses', () => {
  const objects = () => render([CI_VALUES[1]!]);
  const pair = (o: K8sObject[]) =>
    [named(o, 'Ingress', 'flotilla-prod'), named(o, 'Ingress', 'flotilla-prod-streaming')] as const;
  const api = (o: K8sObject[]) => named(o, 'Service', 'flotilla-prod-api');

  it('route every public path to the api Service, with long timeouts for /ws and /sse only', () => {
    const o = objects();
    expect(ofKind(o, 'Ingress')).toHaveLength(2);
    expect(ingressProblems(...pair(o), api(o))).toEqual([]);
  });

  it('keep health and metrics endpoints private', () => {
    const paths = pair(objects()).flatMap((i) =>
      i.spec.rules.flatMap((r: any) => r.http.paths.map((p: any) => p.path)),
    );
    expect(paths.sort()).toEqual([...API_PATHS, ...STREAM_PATHS, ...EXACT].sort());
  });

  it('terminate TLS for their host, with the class and extra annotations asked for', () => {
    for (const ingress of pair(objects())) {
      expect(ingress.spec.tls).toEqual([
        { hosts: ['flotilla.example.com'], secretName: 'flotilla-example-com-tls' },
      ]);
      expect(ingress.spec.rules[0].host).toBe('flotilla.example.com');
      expect(ingress.spec.ingressClassName).toBe('nginx');
      expect(ingress.metadata.annotations['cert-manager.io/cluster-issuer']).toBe('letsencrypt');
    }
  });

  it('give the API its public https URL', () => {
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
    const [api, streaming] = [
      named(o, 'Ingress', 'flotilla-ci'),
      named(o, 'Ingress', 'flotilla-ci-streaming'),
    ];
    expect(api.spec.tls).toBeUndefined();
    expect(api.spec.rules[0].host).toBeUndefined();
    expect(ingressProblems(api, streaming, named(o, 'Service', 'flotilla-ci-api'))).toEqual([]);
  });

  it('lets streamingAnnotations override the streaming defaults, and shared annotations not', () => {
    const o = render([
      CI_VALUES[0]!,
      {
        ingress: {
          enabled: true,
          annotations: { [TIMEOUTS[0]!]: '30', 'example.com/team': 'ci' },
          streamingAnnotations: { [TIMEOUTS[1]!]: '86400' },
        },
      },
    ]);
    const streaming = named(o, 'Ingress', 'flotilla-ci-streaming').metadata.annotations;
    expect(streaming[TIMEOUTS[0]!]).toBe('3600');
    expect(streaming[TIMEOUTS[1]!]).toBe('86400');
    expect(streaming['example.com/team']).toBe('ci');
    expect(named(o, 'Ingress', 'flotilla-ci').metadata.annotations[TIMEOUTS[0]!]).toBe('30');
  });
});

describe('the ingress check', () => {
  const base = () => {
    const o = render([CI_VALUES[1]!]);
    return {
      api: named(o, 'Ingress', 'flotilla-prod'),
      streaming: named(o, 'Ingress', 'flotilla-prod-streaming'),
      service: named(o, 'Service', 'flotilla-prod-api'),
    };
  };

  it('notices a missing websocket route and a short timeout', () => {
    const { api, streaming, service } = base();
    streaming.spec.rules[0].http.paths = streaming.spec.rules[0].http.paths.filter(
      (p: any) => p.path !== '/ws',
    );
    streaming.metadata.annotations[TIMEOUTS[0]!] = '60';
    expect(ingressProblems(api, streaming, service)).toEqual([
      '/ws is not routed by flotilla-prod-streaming',
      'streaming nginx.ingress.kubernetes.io/proxy-read-timeout is 60',
    ]);
  });

  it('notices a route to the wrong Service, long timeouts on /api, and buffering on events', () => {
    const { api, streaming, service } = base();
    streaming.spec.rules[0].http.paths.find((p: any) => p.path === '/sse').backend.service.name = 'other';
    api.metadata.annotations[TIMEOUTS[1]!] = '3600';
    delete streaming.metadata.annotations[BUFFERING];
    expect(ingressProblems(api, streaming, service)).toEqual([
      '/sse goes to other',
      'api nginx.ingress.kubernetes.io/proxy-send-timeout is set',
      'streaming buffering is on',
    ]);
  });
});
