// NetworkPolicies and ServiceMonitors are off by default and, when on, say what they
// should: only workers reach the masters' worker port, workers cannot reach the denied
// networks, and Prometheus scrapes the API's and every master's /metrics.
import { beforeAll, describe, expect, it } from 'vitest';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, render } from './lib/helm.js';
import { named, ofKind } from './lib/objects.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

describe('optional objects', () => {
  it('are off by default', () => {
    const o = render([CI_VALUES[0]!]);
    expect(ofKind(o, 'NetworkPolicy')).toEqual([]);
    expect(ofKind(o, 'ServiceMonitor')).toEqual([]);
  });

  it('let only this release’s workers reach the masters’ worker port', () => {
    const o = render([CI_VALUES[1]!]);
    const master = named(o, 'NetworkPolicy', 'flotilla-prod-master');
    const workerPort = master.spec.ingress.find((r: any) => r.ports.some((p: any) => p.port === 'workers'));
    expect(workerPort.from).toEqual([
      {
        podSelector: {
          matchLabels: {
            'app.kubernetes.io/name': 'flotilla',
            'app.kubernetes.io/instance': 'flotilla-ci',
            'app.kubernetes.io/component': 'worker',
          },
        },
      },
    ]);
  });

  it('keep workers away from the denied networks', () => {
    const o = render([CI_VALUES[1]!]);
    const worker = named(o, 'NetworkPolicy', 'flotilla-prod-worker');
    expect(worker.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    const open = worker.spec.egress.flatMap((r: any) => (r.to ?? []).filter((t: any) => t.ipBlock));
    expect(open).toEqual([
      { ipBlock: { cidr: '0.0.0.0/0', except: ['169.254.169.254/32', '10.20.0.0/16'] } },
    ]);
  });

  it('scrape the API and every master', () => {
    const o = render([CI_VALUES[1]!]);
    const scraped = ofKind(o, 'ServiceMonitor').map((m) => {
      const target = ofKind(o, 'Service').filter((s) =>
        Object.entries<string>(m.spec.selector.matchLabels).every(([k, v]) => s.metadata.labels?.[k] === v),
      );
      return {
        monitor: m.metadata.name,
        services: target.map((s) => s.metadata.name),
        port: m.spec.endpoints[0].port,
      };
    });
    expect(scraped).toEqual([
      { monitor: 'flotilla-prod-api', services: ['flotilla-prod-api'], port: 'http' },
      { monitor: 'flotilla-prod-master', services: ['flotilla-prod-master-headless'], port: 'probe' },
    ]);
    for (const m of ofKind(o, 'ServiceMonitor')) expect(m.metadata.labels.release).toBe('prometheus');
  });
});
