// Finding things in a rendered release: objects by kind and name, and the pods they run.
import type { K8sObject } from './helm.js';

export function ofKind(objects: K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

export function named(objects: K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} named ${name} in the rendered release`);
  return found;
}

const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob']);

export interface Workload {
  object: K8sObject;
  pod: any;
}

/** Every object that runs pods, with its pod spec. */
export function workloads(objects: K8sObject[]): Workload[] {
  return objects
    .filter((o) => WORKLOADS.has(o.kind))
    .map((o) => ({
      object: o,
      pod: o.kind === 'CronJob' ? o.spec.jobTemplate.spec.template.spec : o.spec.template.spec,
    }));
}

/** Long-running workloads: everything but Jobs, whose one-shot containers serve no probe. */
export function services(objects: K8sObject[]): Workload[] {
  return workloads(objects).filter((w) => w.object.kind !== 'Job' && w.object.kind !== 'CronJob');
}

export function label(w: Workload): string {
  return `${w.object.kind}/${w.object.metadata.name}`;
}

// The environment a container would see: literal values, and keys of the rendered Secrets
// (an optional key the Secret lacks is simply absent, as in Kubernetes).
export function containerEnv(objects: K8sObject[], container: any): Record<string, string> {
  const secrets = new Map(ofKind(objects, 'Secret').map((s) => [s.metadata.name, s.data ?? {}]));
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    if (e.value !== undefined) env[e.name] = String(e.value);
    const ref = e.valueFrom?.secretKeyRef;
    if (!ref) continue;
    const data = secrets.get(ref.name)?.[ref.key];
    if (data !== undefined) env[e.name] = Buffer.from(data, 'base64').toString('utf8');
    else if (!ref.optional) throw new Error(`${e.name}: ${ref.name}/${ref.key} is not in the release`);
  }
  return env;
}
