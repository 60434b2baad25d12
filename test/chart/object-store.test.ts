// objectStore: the chart writes config.object_store, which the master accepts, and gives
// masters and API pods (only them) the key pair from the operator's Secret under the names
// the section reads; an endpoint without a Secret is refused at render. Without it, nothing
// changes.
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import { objectStoreOf } from '../../services/core/objstore/from-config.js';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, type K8sObject, render, template } from './lib/helm.js';
import { label, ofKind, services } from './lib/objects.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

const objectStore = { endpoint: 'https://s3.example.org', bucket: 'ci-logs', existingSecret: 's3-keys' };
const masterYaml = (objects: K8sObject[]) => ofKind(objects, 'ConfigMap')[0]!.data['master.yaml'];
const secretEnv = (objects: K8sObject[], component: string) =>
  services(objects)
    .filter((w) => label(w).includes(`-${component}`))
    .flatMap((w) => (w.pod.containers[0].env ?? []) as { name: string; valueFrom?: any }[])
    .filter((e) => e.name.startsWith('FLOTILLA_OBJECT_STORE'));

describe('objectStore', () => {
  it('writes config.object_store and gives masters and API pods the key pair from the Secret', () => {
    const objects = render([CI_VALUES[0]!, { objectStore }]);
    const config = parseMasterConfig(masterYaml(objects));
    expect(config.object_store).toMatchObject({
      endpoint: objectStore.endpoint,
      bucket: 'ci-logs',
      region: 'us-east-1',
    });
    const env = {
      FLOTILLA_OBJECT_STORE_ACCESS_KEY_ID: 'id',
      FLOTILLA_OBJECT_STORE_SECRET_ACCESS_KEY: 'secret',
    };
    expect(objectStoreOf(config.object_store, env)).not.toBeNull();
    for (const component of ['master', 'api']) {
      expect(secretEnv(objects, component).map((e) => [e.name, e.valueFrom.secretKeyRef])).toEqual([
        ['FLOTILLA_OBJECT_STORE_ACCESS_KEY_ID', { name: 's3-keys', key: 'access_key_id' }],
        ['FLOTILLA_OBJECT_STORE_SECRET_ACCESS_KEY', { name: 's3-keys', key: 'secret_access_key' }],
      ]);
    }
    expect(secretEnv(objects, 'worker')).toEqual([]);
  });

  it('refuses an endpoint without a Secret, and changes nothing without an endpoint', () => {
    const { stderr } = template([CI_VALUES[0]!, { objectStore: { ...objectStore, existingSecret: '' } }]);
    expect(stderr).toContain('objectStore.existingSecret is needed');
    const plain = render([CI_VALUES[0]!]);
    expect(parse(masterYaml(plain)).object_store).toBeUndefined();
    expect(secretEnv(plain, 'api')).toEqual([]);
  });
});
