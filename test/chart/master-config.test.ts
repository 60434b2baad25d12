// The master configuration the chart renders is one the master accepts, names every worker
// pod, and the chart's schema for `config` says what the master's own schema says.
import { basename } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { masterConfigSchema, parseMasterConfig } from '../../services/core/config/master-config.js';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, type K8sObject, render, template } from './lib/helm.js';
import { ofKind } from './lib/objects.js';
import { chartSchema, schemaPaths } from './lib/schema.js';
import { zodPaths } from './lib/zod-paths.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

function masterYaml(objects: K8sObject[]): string {
  const [config] = ofKind(objects, 'ConfigMap');
  return config!.data['master.yaml'];
}

describe.each(CI_VALUES.map((f) => [basename(f), f]))('%s', (_name, file) => {
  const objects = () => render([file]);

  it('renders a master configuration the master accepts', () => {
    expect(() => parseMasterConfig(masterYaml(objects()), 'rendered master.yaml')).not.toThrow();
  });

  it('lists every worker pod, each with its password in the worker Secret', () => {
    const all = objects();
    const workers = ofKind(all, 'StatefulSet').find((s) => s.metadata.name.endsWith('-worker'))!;
    const podNames = Array.from({ length: workers.spec.replicas }, (_, i) => `${workers.metadata.name}-${i}`);
    const config = parse(masterYaml(all));
    expect(config.workers.map((w: { name: string }) => w.name)).toEqual(podNames);
    const secretName = workers.spec.template.spec.volumes.find((v: any) => v.name === 'worker-passwords')
      .secret.secretName;
    for (const w of config.workers) {
      expect(w.password_file).toBe(`/etc/flotilla/worker-passwords/${w.name}`);
      expect(w.password).toBeUndefined();
    }
    // The chart's own Secret has a key per worker; an existing one is the operator's to fill.
    const secret = ofKind(all, 'Secret').find((s) => s.metadata.name === secretName);
    if (secret) expect(Object.keys(secret.data).sort()).toEqual([...podNames].sort());
  });
});

it('the master would reject a worker the chart forgot (the check above can fail)', () => {
  // As data, not a text replace: a replace that matched nothing would test the whole list.
  const config = parse(masterYaml(render([CI_VALUES[1]!])));
  const forgotten = 'flotilla-prod-worker-0';
  expect(config.workers.map((w: { name: string }) => w.name)).toContain(forgotten);
  config.workers = config.workers.filter((w: { name: string }) => w.name !== forgotten);
  expect(() => parseMasterConfig(stringify(config))).toThrow(new RegExp(`invalid[^]*${forgotten}`));
});

describe("the chart's schema for config", () => {
  // What the chart fills in itself, and so refuses from values (Flotilla's own protocol is on
  // the port its Services name).
  const CHART_MADE = /^(workers|auth\.users|auth\.users_file|protocols\.flotilla)(\b|$)/;

  it('names the same keys as the master configuration schema', () => {
    const root = chartSchema();
    const chart = [...schemaPaths(root, root.properties!.config!)].sort();
    const master = [...zodPaths(masterConfigSchema)].filter((p) => !CHART_MADE.test(p)).sort();
    expect(chart).toEqual(master);
  });

  it("takes a step's name as the master does: any string of 1 to 50 characters", () => {
    const [worker] = parse(masterYaml(render([CI_VALUES[0]!]))).workers as { name: string }[];
    const withStep = (name: string) => [
      CI_VALUES[0]!,
      {
        config: {
          builders: [
            { name: 'b', workers: [worker!.name], steps: [{ type: 'shell', name, command: 'true' }] },
          ],
        },
      },
    ];
    expect(template(withStep('unit tests')).stderr).toBe('');
    const config = parse(masterYaml(render(withStep('unit tests'))));
    expect(parseMasterConfig(stringify(config)).builders[0]!.steps[0]!.name).toBe('unit tests');
    const long = template(withStep('s'.repeat(51)));
    expect(long.status).not.toBe(0);
    expect(long.stderr).toContain('config.builders.0.steps.0.name');
  });

  it('would notice a key the master schema has and the chart lacks', () => {
    const root = chartSchema();
    const chart = schemaPaths(root, root.properties!.config!);
    const master = zodPaths(masterConfigSchema.extend({ new_key: masterConfigSchema.shape.title }));
    expect([...master].filter((p) => !CHART_MADE.test(p) && !chart.has(p))).toEqual(['new_key']);
  });
});

describe("the API pods' raw log cache", () => {
  const apiPod = (objects: K8sObject[]) =>
    ofKind(objects, 'Deployment').find((d) => d.metadata.name.endsWith('-api'))!.spec.template.spec;

  it('lives on an emptyDir of its own, sized for max_mb and the files being written', () => {
    for (const [values, mib] of [
      [[CI_VALUES[0]!], 320],
      [[CI_VALUES[0]!, { config: { www: { raw_log_cache: { max_mb: 1024 } } } }], 1088],
    ] as const) {
      const objects = render([...values]);
      const pod = apiPod(objects);
      const mount = pod.containers[0].volumeMounts.find((m: any) => m.name === 'raw-logs');
      const volume = pod.volumes.find((v: any) => v.name === 'raw-logs');
      expect(volume.emptyDir).toEqual({ sizeLimit: `${mib}Mi` });
      expect(parse(masterYaml(objects)).www.raw_log_cache.dir).toBe(mount.mountPath);
    }
  });

  it('keeps a folder the operator names', () => {
    const objects = render([CI_VALUES[0]!, { config: { www: { raw_log_cache: { dir: '/srv/cache' } } } }]);
    expect(parse(masterYaml(objects)).www.raw_log_cache.dir).toBe('/srv/cache');
  });
});
