// Every object of every ci/ value set is a valid Kubernetes object (kubernetes-models'
// schemas), with no key those schemas do not know.
import { basename } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, type K8sObject, render } from './lib/helm.js';
import { named } from './lib/objects.js';
import { validateStrict } from './lib/strict-validate.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

describe.each(CI_VALUES)('%s', (file) => {
  it(`renders only valid objects with known keys (${basename(file)})`, () => {
    const objects = render([file]);
    expect(objects.length).toBeGreaterThan(5);
    expect(objects.flatMap(validateStrict)).toEqual([]);
  });
});

describe('the validator itself', () => {
  const minimal = () => render([CI_VALUES[0]!]);
  const api = (objects: K8sObject[]) => named(objects, 'Deployment', 'flotilla-ci-api');

  it('catches a misspelled key deep in a pod spec', () => {
    const objects = minimal();
    const container = api(objects).spec.template.spec.containers[0];
    container.readinesProbe = container.readinessProbe;
    expect(validateStrict(api(objects))).toEqual([
      'Deployment/flotilla-ci-api: unknown key spec.template.spec.containers[0].readinesProbe',
    ]);
  });

  it('catches a misspelled top-level key and one in metadata', () => {
    const objects = minimal();
    const service = named(objects, 'Service', 'flotilla-ci-api');
    service.specs = {};
    service.metadata.label = { a: 'b' };
    expect(validateStrict(service)).toEqual([
      'Service/flotilla-ci-api: unknown key metadata.label',
      'Service/flotilla-ci-api: unknown key specs',
    ]);
  });

  it('accepts any key inside a map (labels, ConfigMap data)', () => {
    const objects = minimal();
    const config = named(objects, 'ConfigMap', 'flotilla-ci-config');
    config.metadata.labels['example.com/anything'] = 'x';
    config.data['another.yaml'] = 'x';
    expect(validateStrict(config)).toEqual([]);
  });

  it('catches a schema error (wrong type)', () => {
    const objects = minimal();
    api(objects).spec.replicas = 'two';
    expect(validateStrict(api(objects)).join('\n')).toMatch(/replicas/);
  });

  it('refuses a kind it has no model for', () => {
    const odd: K8sObject = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } };
    expect(validateStrict(odd)).toEqual([
      'Widget/w: no model for example.com/v1/Widget (add it to test/chart/lib/models.ts)',
    ]);
  });

  it('checks ServiceMonitors (a CRD) strictly too', () => {
    const objects = render([CI_VALUES[1]!]);
    const monitor = named(objects, 'ServiceMonitor', 'flotilla-prod-api');
    expect(validateStrict(monitor)).toEqual([]);
    monitor.spec.endpoints[0].intervall = '5s';
    expect(validateStrict(monitor)).toEqual([
      'ServiceMonitor/flotilla-prod-api: unknown key spec.endpoints[0].intervall',
    ]);
  });
});
