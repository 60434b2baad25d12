// Every long-running container has a liveness and a readiness probe aimed at a port it
// declares; readiness is /readyz (for the API: PostgreSQL and Redis answer).
import { basename } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, render } from './lib/helm.js';
import { label, services, type Workload } from './lib/objects.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

function probeProblems(w: Workload): string[] {
  const problems: string[] = [];
  for (const c of w.pod.containers) {
    const where = `${label(w)} container ${c.name}`;
    const ports = new Set((c.ports ?? []).flatMap((p: any) => [p.name, p.containerPort]));
    for (const kind of ['livenessProbe', 'readinessProbe'] as const) {
      const probe = c[kind];
      if (!probe) {
        problems.push(`${where}: no ${kind}`);
        continue;
      }
      if (!probe.httpGet) problems.push(`${where}: ${kind} is not an HTTP check`);
      else if (!ports.has(probe.httpGet.port))
        problems.push(`${where}: ${kind} port ${probe.httpGet.port} not declared`);
    }
    if (c.livenessProbe?.httpGet?.path !== '/healthz') problems.push(`${where}: liveness is not /healthz`);
    if (c.readinessProbe?.httpGet?.path !== '/readyz') problems.push(`${where}: readiness is not /readyz`);
  }
  return problems;
}

describe.each(CI_VALUES.map((f) => [basename(f), f]))('%s', (_name, file) => {
  it('every api, master and worker container has liveness and readiness probes', () => {
    const workloads = services(render([file]));
    expect(workloads.map((w) => w.object.metadata.name).sort()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/-api$/),
        expect.stringMatching(/-master$/),
        expect.stringMatching(/-worker$/),
      ]),
    );
    expect(workloads.flatMap(probeProblems)).toEqual([]);
  });
});

describe('the probe check', () => {
  const api = () => services(render([CI_VALUES[0]!])).find((w) => w.object.kind === 'Deployment')!;

  it('notices a missing readiness probe', () => {
    const w = api();
    delete w.pod.containers[0].readinessProbe;
    expect(probeProblems(w)).toEqual([
      'Deployment/flotilla-ci-api container api: no readinessProbe',
      'Deployment/flotilla-ci-api container api: readiness is not /readyz',
    ]);
  });

  it('notices a probe aimed at a port the container does not have', () => {
    const w = api();
    w.pod.containers[0].livenessProbe.httpGet.port = 'metrics';
    expect(probeProblems(w)).toEqual([
      'Deployment/flotilla-ci-api container api: livenessProbe port metrics not declared',
    ]);
  });
});
