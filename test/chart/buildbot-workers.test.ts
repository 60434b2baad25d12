// buildbot-workers connect to the masters on the port of config.protocols.msgpack_experimental_v7
// or config.protocols.pb (Buildbot's default): the chart exposes each on the master pods, both
// master Services and the masters' network policy, and the rendered configuration names it;
// without the section, nothing of it appears.
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, type K8sObject, render } from './lib/helm.js';
import { ofKind } from './lib/objects.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

const master = (o: K8sObject[]) =>
  ofKind(o, 'StatefulSet').find((s) => s.metadata.name.endsWith('-master'))!.spec.template.spec.containers[0];
const services = (o: K8sObject[]) => ofKind(o, 'Service').filter((s) => s.metadata.name.includes('-master'));

describe.each([
  ['msgpack_experimental_v7', 'buildbot-workers'],
  ['pb', 'pb-workers'],
])('the %s port', (protocol, portName) => {
  const values = { config: { protocols: { [protocol]: { port: 9999 } } } };

  it('is exposed when the configuration turns the protocol on', () => {
    const objects = render([CI_VALUES[0]!, values, { networkPolicy: { enabled: true } }]);
    expect(master(objects).ports).toContainEqual({
      name: portName,
      containerPort: 9999,
      protocol: 'TCP',
    });
    const svcs = services(objects);
    expect(svcs).toHaveLength(2);
    for (const s of svcs)
      expect(s.spec.ports).toContainEqual({
        name: portName,
        port: 9999,
        targetPort: portName,
        protocol: 'TCP',
      });
    const policy = ofKind(objects, 'NetworkPolicy').find((p) => p.metadata.name.endsWith('-master'));
    expect(policy!.spec.ingress).toContainEqual({ ports: [{ port: portName, protocol: 'TCP' }] });
    const config = ofKind(objects, 'ConfigMap')[0]!.data['master.yaml'];
    expect(parseMasterConfig(config).protocols).toEqual({ [protocol]: { port: 9999 } });
    expect(parse(config).protocols).toEqual(values.config.protocols);
  });

  it('is absent otherwise', () => {
    const objects = render([CI_VALUES[0]!]);
    expect(JSON.stringify(master(objects).ports)).not.toContain(portName);
    for (const s of services(objects)) expect(JSON.stringify(s.spec.ports)).not.toContain(portName);
  });

  it("refuses the ports the chart's own listeners take", () => {
    expect(() =>
      render([CI_VALUES[0]!, { config: { protocols: { [protocol]: { port: 9989 } } } }]),
    ).toThrow();
  });
});
