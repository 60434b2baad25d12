// NetworkPolicies are on by default, ServiceMonitors off; both say what they should: only
// workers reach the masters' worker port, workers cannot reach the denied networks (IPv4
// and IPv6), and Prometheus scrapes the API's and every master's /metrics.
import { beforeAll, describe, expect, it } from 'vitest';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, render } from './lib/helm.js';
import { named, ofKind } from './lib/objects.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

describe('optional objects', () => {
  it('are NetworkPolicies by default, and no ServiceMonitor', () => {
    const o = render([CI_VALUES[0]!]);
    expect(ofKind(o, 'NetworkPolicy').map((p) => p.metadata.name)).toEqual([
      'flotilla-ci-api',
      'flotilla-ci-master',
      'flotilla-ci-worker',
    ]);
    expect(ofKind(o, 'ServiceMonitor')).toEqual([]);
    expect(ofKind(render([CI_VALUES[0]!, { networkPolicy: { enabled: false } }]), 'NetworkPolicy')).toEqual(
      [],
    );
  });

  it('keep workers off private, link-local and metadata networks by default, for IPv4 and IPv6', () => {
    const worker = named(render([CI_VALUES[0]!]), 'NetworkPolicy', 'flotilla-ci-worker');
    const open = worker.spec.egress.flatMap((r: any) => (r.to ?? []).filter((t: any) => t.ipBlock));
    expect(open).toEqual([
      {
        ipBlock: {
          cidr: '0.0.0.0/0',
          except: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16'],
        },
      },
      { ipBlock: { cidr: '::/0', except: ['fc00::/7', 'fe80::/10'] } },
    ]);
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
    expect(open.map((b: any) => b.ipBlock.cidr)).toEqual(['0.0.0.0/0', '::/0']);
    expect(open[0].ipBlock.except).toContain('203.0.113.0/24');
    // ...but for the exception asked for, the in-cluster git server.
    expect(worker.spec.egress.at(-1)).toEqual({
      to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'gitea' } } }],
      ports: [{ port: 443, protocol: 'TCP' }],
    });
  });

  it('scrape the API, every master and every worker', () => {
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
      { monitor: 'flotilla-prod-api', services: ['flotilla-prod-api'], port: 'probe' },
      { monitor: 'flotilla-prod-master', services: ['flotilla-prod-master-headless'], port: 'probe' },
      { monitor: 'flotilla-prod-worker', services: ['flotilla-prod-worker-headless'], port: 'probe' },
    ]);
    for (const m of ofKind(o, 'ServiceMonitor')) expect(m.metadata.labels.release).toBe('prometheus');
  });
});
