// What a platform team sets on every chart, and what it checks in review: the chart can be
// a subchart; images by digest; scheduling, extra volumes and environment sources per
// component; labels on pods; startup probes, HPA behavior, PDBs, storage requests; drain
// and grace periods that agree; TLS between workers and masters; and renders that are the
// same every time (GitOps).
import { cpSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import {
  CHART,
  CI_VALUES,
  ensureHelm,
  FETCH_TIMEOUT_MS,
  helm,
  type K8sObject,
  KUBE_VERSION,
  render,
  template,
} from './lib/helm.js';
import { named, ofKind, services, workloads } from './lib/objects.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

const [minimal, production] = [CI_VALUES[0]!, CI_VALUES[1]!];
const scratch = mkdtempSync(join(tmpdir(), 'flotilla-platform-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const containerOf = (o: K8sObject[], kind: string, name: string, container?: string) => {
  const pod = named(o, kind, name).spec.template.spec;
  return container ? pod.containers.find((c: any) => c.name === container) : pod.containers[0];
};
const envOf = (c: any, name: string) => c.env.find((e: any) => e.name === name);

/** Kubernetes quantities in bytes (only the suffixes the chart uses). */
function bytes(q: string | number): number {
  const m = /^([0-9.]+)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(String(q));
  if (!m) throw new Error(`not a quantity: ${q}`);
  const unit =
    { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2] ?? ''] ?? 1;
  return Number(m[1]) * unit;
}

describe('as a subchart', () => {
  it('renders inside an umbrella chart that sets `global`', () => {
    const umbrella = join(scratch, 'umbrella');
    mkdirSync(join(umbrella, 'charts'), { recursive: true });
    cpSync(CHART, join(umbrella, 'charts/flotilla'), { recursive: true });
    writeFileSync(
      join(umbrella, 'Chart.yaml'),
      stringify({
        apiVersion: 'v2',
        name: 'platform',
        version: '1.0.0',
        dependencies: [{ name: 'flotilla', version: '>=0.0.0' }],
      }),
    );
    writeFileSync(
      join(umbrella, 'values.yaml'),
      stringify({
        global: { imageRegistry: 'registry.example.com', storageClass: 'fast' },
        flotilla: { database: { url: 'postgresql://u:p@db/f' }, redis: { url: 'redis://r' } },
      }),
    );
    const r = helm(['template', 'umbrella', umbrella, '--kube-version', KUBE_VERSION]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('kind: StatefulSet');
  });
});

describe('images', () => {
  it('are pinned by digest when one is given, for servers and workers', () => {
    const o = render([production]);
    const server =
      'registry.example.com/flotilla/flotilla:0.1.0@sha256:0f3c1e5d7a9b2c4e6f8a0b1c3d5e7f9a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d9e';
    expect(containerOf(o, 'Deployment', 'flotilla-prod-api').image).toBe(server);
    expect(containerOf(o, 'StatefulSet', 'flotilla-prod-master').image).toBe(server);
    expect(named(o, 'Job', 'flotilla-prod-migrate').spec.template.spec.containers[0].image).toBe(server);
    const worker = named(o, 'StatefulSet', 'flotilla-prod-worker').spec.template.spec;
    for (const c of [...worker.initContainers, ...worker.containers])
      expect(c.image).toBe(
        'registry.example.com/flotilla/flotilla-worker:0.1.0@sha256:1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809',
      );
  });

  it('take a numeric tag as written (--set image.tag=123), and default the worker image from the server one', () => {
    const r = template([minimal], ['--set', 'image.tag=123']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('image: flotilla:123\n');
    expect(r.stdout).toContain('image: flotilla-worker:123\n');
  });

  it('refuse a digest that is not one', () => {
    const r = template([minimal, { image: { digest: 'latest' } }]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('digest');
  });
});

describe('per-component pod settings', () => {
  const o = () => render([production]);

  it('place pods as asked: affinity, tolerations, nodeSelector, spread, priority', () => {
    const api = named(o(), 'Deployment', 'flotilla-prod-api').spec.template.spec;
    expect(api.priorityClassName).toBe('flotilla-high');
    expect(
      api.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms,
    ).toHaveLength(1);
    expect(api.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });
    expect(api.tolerations[0].value).toBe('flotilla');
    // The default spread over nodes, where none is given.
    expect(api.topologySpreadConstraints[0].topologyKey).toBe('kubernetes.io/hostname');
    const worker = named(o(), 'StatefulSet', 'flotilla-prod-worker').spec.template.spec;
    expect(worker.topologySpreadConstraints).toEqual([
      expect.objectContaining({
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'DoNotSchedule',
      }),
    ]);
    expect(worker.tolerations[0].value).toBe('builds');
  });

  it('add extra volumes, mounts, env (valueFrom too) and envFrom', () => {
    const master = named(o(), 'StatefulSet', 'flotilla-prod-master').spec.template.spec;
    expect(master.volumes).toContainEqual({
      name: 'git-ssh',
      secret: { secretName: 'flotilla-git-ssh', defaultMode: 0o400 },
    });
    expect(master.containers[0].volumeMounts).toContainEqual({
      name: 'git-ssh',
      mountPath: '/home/flotilla/.ssh',
      readOnly: true,
    });
    expect(envOf(master.containers[0], 'OTEL_RESOURCE_ATTRIBUTES').value).toBe(
      'deployment.environment=production',
    );
    expect(containerOf(o(), 'Deployment', 'flotilla-prod-api').envFrom).toEqual([
      { secretRef: { name: 'flotilla-api-extra' } },
    ]);
    const r = render([
      minimal,
      { extraEnv: [{ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }] },
    ]);
    for (const w of services(r))
      expect(envOf(w.pod.containers[0], 'NODE_NAME'), w.object.metadata.name).toEqual({
        name: 'NODE_NAME',
        valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } },
      });
  });

  it('put commonLabels and podLabels on pods, and annotations and labels on Services', () => {
    const objects = o();
    for (const w of workloads(objects))
      expect(w.object.spec.template.metadata.labels.team, w.object.metadata.name).toBe('platform');
    expect(
      named(objects, 'Deployment', 'flotilla-prod-api').spec.template.metadata.labels['cost-center'],
    ).toBe('ci');
    expect(named(objects, 'Service', 'flotilla-prod-api').metadata.annotations).toEqual({
      'cloud.google.com/backend-config': '{"default": "flotilla-api"}',
    });
    const r = render([minimal, { worker: { service: { labels: { scrape: 'prometheus' } } } }]);
    expect(named(r, 'Service', 'flotilla-ci-worker-headless').metadata.labels.scrape).toBe('prometheus');
  });
});

describe('availability', () => {
  it('gives every long-running container a startup probe', () => {
    for (const w of services(render([production])))
      for (const c of w.pod.containers)
        expect(c.startupProbe?.httpGet?.path, w.object.metadata.name).toBe('/healthz');
  });

  it('scales the API up fast and down slowly, and keeps a PDB for each component', () => {
    const o = render([production]);
    const hpa = named(o, 'HorizontalPodAutoscaler', 'flotilla-prod-api');
    expect(hpa.spec.behavior.scaleDown.stabilizationWindowSeconds).toBe(300);
    expect(ofKind(o, 'PodDisruptionBudget').map((p) => p.metadata.name)).toEqual([
      'flotilla-prod-api',
      'flotilla-prod-master',
      'flotilla-prod-worker',
    ]);
  });

  it('requests the ephemeral storage its emptyDirs may fill', () => {
    for (const values of [minimal, production]) {
      for (const w of workloads(render([values]))) {
        const dirs = (w.pod.volumes ?? []).filter((v: any) => v.emptyDir && v.emptyDir.medium !== 'Memory');
        const limit = dirs.reduce((n: number, v: any) => n + bytes(v.emptyDir.sizeLimit), 0);
        const requested = w.pod.containers.reduce(
          (n: number, c: any) => n + bytes(c.resources?.requests?.['ephemeral-storage'] ?? 0),
          0,
        );
        expect(
          requested,
          `${w.object.metadata.name}: ${dirs.map((d: any) => d.name)}`,
        ).toBeGreaterThanOrEqual(limit);
      }
    }
  });

  it('waits before the API stops (preStop), within a grace period that covers it and the close', () => {
    const api = named(render([minimal]), 'Deployment', 'flotilla-ci-api').spec.template.spec;
    expect(api.containers[0].lifecycle.preStop.exec.command).toEqual(['sleep', '10']);
    expect(api.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(10 + 25);
    const r = template([minimal, { api: { preStopSeconds: 30, terminationGracePeriodSeconds: 40 } }]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('api.terminationGracePeriodSeconds (40) must cover api.preStopSeconds (30)');
  });
});

describe('masters', () => {
  it('derive the grace period from the drain time, so raising one raises both', () => {
    for (const drain of [60, 600]) {
      const o = render([minimal, { master: { drainSeconds: drain } }]);
      const pod = named(o, 'StatefulSet', 'flotilla-ci-master').spec.template.spec;
      expect(envOf(pod.containers[0], 'MASTER_DRAIN_SECONDS').value).toBe(String(drain));
      // The master's own bound is the drain plus 30 s for jobs, schedulers and stores
      // (services/master/service.ts); the kubelet must not cut it short.
      expect(pod.terminationGracePeriodSeconds).toBe(drain + 45);
    }
  });

  it("keep the git pollers' mirrors on a sized volume of their own, or a PersistentVolumeClaim", () => {
    const sts = (values: object) => named(render([minimal, values]), 'StatefulSet', 'flotilla-ci-master');
    const plain = sts({ master: { workdir: { sizeLimit: '40Gi' } } });
    const c = plain.spec.template.spec.containers[0];
    expect(envOf(c, 'MASTER_WORKDIR').value).toBe('/var/lib/flotilla/master');
    expect(c.volumeMounts).toContainEqual({ name: 'workdir', mountPath: '/var/lib/flotilla/master' });
    expect(plain.spec.template.spec.volumes).toContainEqual({
      name: 'workdir',
      emptyDir: { sizeLimit: '40Gi' },
    });
    const kept = sts({
      master: { workdir: { persistence: { enabled: true, size: '100Gi', storageClassName: 'ssd' } } },
    });
    expect(kept.spec.template.spec.volumes.find((v: any) => v.name === 'workdir')).toBeUndefined();
    expect(kept.spec.volumeClaimTemplates[0]).toMatchObject({
      metadata: { name: 'workdir' },
      spec: { storageClassName: 'ssd', resources: { requests: { storage: '100Gi' } } },
    });
  });
});

describe('TLS between workers and masters', () => {
  it('is on in the production values: masters serve the certificate, workers check it', () => {
    const o = render([production]);
    const master = named(o, 'StatefulSet', 'flotilla-prod-master').spec.template.spec;
    expect(envOf(master.containers[0], 'WORKER_TLS_CERT_FILE').value).toBe(
      '/etc/flotilla/worker-tls/tls.crt',
    );
    expect(envOf(master.containers[0], 'WORKER_TLS_KEY_FILE').value).toBe('/etc/flotilla/worker-tls/tls.key');
    const worker = named(o, 'StatefulSet', 'flotilla-prod-worker').spec.template.spec;
    const url = new URL(envOf(worker.containers[0], 'MASTER_URL').value);
    expect(url.protocol).toBe('wss:');
    expect(envOf(worker.containers[0], 'MASTER_CA_FILE').value).toBe('/etc/flotilla/worker-tls/ca.crt');
    // A worker gets the authority, never the key.
    const tls = worker.volumes.find((v: any) => v.name === 'worker-tls');
    expect(tls.secret.items).toEqual([{ key: 'ca.crt', path: 'ca.crt' }]);
    const cert = named(o, 'Certificate', 'flotilla-prod-worker-tls');
    expect(cert.spec.secretName).toBe(tls.secret.secretName);
    expect(cert.spec.dnsNames).toContain(url.hostname);
    expect(cert.spec.issuerRef).toEqual({ name: 'flotilla-ca', kind: 'Issuer', group: 'cert-manager.io' });
  });

  it('takes an existing Secret instead of cert-manager, and is off by default', () => {
    const o = render([minimal, { workerTls: { enabled: true, secretName: 'my-tls' } }]);
    expect(ofKind(o, 'Certificate')).toEqual([]);
    const master = named(o, 'StatefulSet', 'flotilla-ci-master').spec.template.spec;
    expect(master.volumes.find((v: any) => v.name === 'worker-tls').secret.secretName).toBe('my-tls');
    const plain = named(render([minimal]), 'StatefulSet', 'flotilla-ci-worker').spec.template.spec;
    expect(envOf(plain.containers[0], 'MASTER_URL').value).toMatch(/^ws:\/\//);
  });
});

describe('GitOps', () => {
  it('the production values render the same twice (nothing generated by lookup)', () => {
    const a = template([production]);
    const b = template([production]);
    expect(a.status).toBe(0);
    expect(a.stdout).toBe(b.stdout);
  });

  it('a release with generated secrets would not (the check can fail)', () => {
    expect(template([minimal]).stdout).not.toBe(template([minimal]).stdout);
  });
});

describe('NOTES.txt', () => {
  // helm renders NOTES.txt only on install (which needs a cluster). In a copy of the chart, a
  // template renders the same file with `tpl`, in the same context, into a ConfigMap.
  function notes(values: string): string {
    const copy = join(scratch, `notes-${Math.random().toString(36).slice(2)}`);
    cpSync(CHART, copy, { recursive: true });
    renameSync(join(copy, 'templates/NOTES.txt'), join(copy, 'notes-under-test.txt'));
    writeFileSync(
      join(copy, 'templates/notes-under-test.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\ndata:\n  notes: |\n{{ tpl (.Files.Get "notes-under-test.txt") . | indent 4 }}\n',
    );
    const r = helm([
      'template',
      'flotilla-ci',
      copy,
      '-f',
      values,
      '--show-only',
      'templates/notes-under-test.yaml',
    ]);
    expect(r.status, r.stderr).toBe(0);
    return parse(r.stdout).data.notes;
  }

  it('says where the API answers, how to test the release, and warns about generated secrets', () => {
    const text = notes(production);
    expect(text).toContain('https://flotilla.example.com/api/v2');
    expect(text).toContain('helm test flotilla-ci');
    expect(text).not.toContain('generated');
    const min = notes(minimal);
    expect(min).toContain('kubectl -n default port-forward service/flotilla-ci-api 8080:80');
    expect(min).toContain('generated');
  });
});
