// API pods and masters scale independently: separate workloads, separate selectors, and
// changing one's count (or autoscaling) leaves the other exactly as it was.
import { beforeAll, describe, expect, it } from 'vitest';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, type K8sObject, render, type Values } from './lib/helm.js';
import { named, ofKind } from './lib/objects.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

const API = 'flotilla-ci-api';
const MASTER = 'flotilla-ci-master';
const minimal = CI_VALUES[0]!;

function release(...values: Values[]) {
  const objects = render([minimal, ...values]);
  return {
    objects,
    api: named(objects, 'Deployment', API),
    master: named(objects, 'StatefulSet', MASTER),
  };
}

/** Does a label selector pick a pod with these labels? */
function selects(selector: { matchLabels: Record<string, string> }, labels: Record<string, string>): boolean {
  return Object.entries(selector.matchLabels).every(([k, v]) => labels[k] === v);
}

/** What scaling the API must never touch: the master workload, whole. */
const masterSpec = (r: { master: K8sObject }) => r.master.spec;
/** What scaling masters must never touch: the API workload and anything aimed at it. */
const apiSide = (r: { objects: K8sObject[]; api: K8sObject }) => ({
  replicas: r.api.spec.replicas,
  template: r.api.spec.template,
  hpa: ofKind(r.objects, 'HorizontalPodAutoscaler'),
});

describe('api and master scale independently', () => {
  it('are separate workloads: a Deployment and a StatefulSet', () => {
    const r = release();
    expect(r.api.kind).toBe('Deployment');
    expect(r.master.kind).toBe('StatefulSet');
  });

  it('select disjoint pods, as do their PodDisruptionBudgets', () => {
    const r = release();
    const apiPod = r.api.spec.template.metadata.labels;
    const masterPod = r.master.spec.template.metadata.labels;
    expect(selects(r.api.spec.selector, masterPod)).toBe(false);
    expect(selects(r.master.spec.selector, apiPod)).toBe(false);
    const apiPdb = named(r.objects, 'PodDisruptionBudget', API);
    const masterPdb = named(r.objects, 'PodDisruptionBudget', MASTER);
    expect([selects(apiPdb.spec.selector, apiPod), selects(apiPdb.spec.selector, masterPod)]).toEqual([
      true,
      false,
    ]);
    expect([selects(masterPdb.spec.selector, masterPod), selects(masterPdb.spec.selector, apiPod)]).toEqual([
      true,
      false,
    ]);
  });

  it('changing api.replicas changes the API pods only', () => {
    const two = release({ api: { replicas: 2 } });
    const seven = release({ api: { replicas: 7 } });
    expect([two.api.spec.replicas, seven.api.spec.replicas]).toEqual([2, 7]);
    expect(masterSpec(seven)).toEqual(masterSpec(two));
  });

  it('changing master.replicas changes the masters only', () => {
    const one = release({ master: { replicas: 1 } });
    const five = release({ master: { replicas: 5 } });
    expect([one.master.spec.replicas, five.master.spec.replicas]).toEqual([1, 5]);
    expect(apiSide(five)).toEqual(apiSide(one));
  });

  it('autoscaling drives the API Deployment only, and leaves the masters alone', () => {
    const fixed = release();
    const scaled = release({ api: { autoscaling: { enabled: true, minReplicas: 3, maxReplicas: 30 } } });
    const [hpa, ...more] = ofKind(scaled.objects, 'HorizontalPodAutoscaler');
    expect(more).toEqual([]);
    expect(hpa!.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: API });
    expect([hpa!.spec.minReplicas, hpa!.spec.maxReplicas]).toEqual([3, 30]);
    // The HPA owns the count: a fixed one in the Deployment would reset it on each upgrade.
    expect(scaled.api.spec.replicas).toBeUndefined();
    expect(masterSpec(scaled)).toEqual(masterSpec(fixed));
  });

  it('the comparison notices when one side does change (so the checks above can fail)', () => {
    const one = release({ master: { replicas: 1 } });
    const five = release({ master: { replicas: 5 } });
    expect(masterSpec(five)).not.toEqual(masterSpec(one));
    const a = release({ api: { replicas: 2 } });
    const b = release({ api: { replicas: 3 } });
    expect(apiSide(b)).not.toEqual(apiSide(a));
  });

  it('the selector check notices overlapping selectors', () => {
    const r = release();
    const shared = { matchLabels: { 'app.kubernetes.io/instance': 'flotilla-ci' } };
    expect(selects(shared, r.master.spec.template.metadata.labels)).toBe(true);
    expect(selects(shared, r.api.spec.template.metadata.labels)).toBe(true);
  });
});
