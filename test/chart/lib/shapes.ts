// Kinds from custom resource definitions, which kubernetes-models does not carry: the
// fields the chart uses, copied from the CRD's schema, checked strictly (types and
// unknown keys): ServiceMonitor (monitoring.coreos.com/v1, Prometheus Operator) and
// Certificate (cert-manager.io/v1).
export type Shape =
  | 'string'
  | 'number'
  | 'boolean'
  | { map: 'string' }
  | { list: Shape }
  | { enum: readonly string[] }
  | { fields: Record<string, Shape>; required?: readonly string[] };

const stringMap: Shape = { map: 'string' };

const objectMeta: Shape = {
  fields: { name: 'string', namespace: 'string', labels: stringMap, annotations: stringMap },
  required: ['name'],
};

const labelSelector: Shape = {
  fields: {
    matchLabels: stringMap,
    matchExpressions: {
      list: {
        fields: { key: 'string', operator: 'string', values: { list: 'string' } },
        required: ['key', 'operator'],
      },
    },
  },
};

const serviceMonitor: Shape = {
  fields: {
    apiVersion: { enum: ['monitoring.coreos.com/v1'] },
    kind: { enum: ['ServiceMonitor'] },
    metadata: objectMeta,
    spec: {
      fields: {
        jobLabel: 'string',
        selector: labelSelector,
        namespaceSelector: { fields: { any: 'boolean', matchNames: { list: 'string' } } },
        endpoints: {
          list: {
            fields: {
              port: 'string',
              path: 'string',
              interval: 'string',
              scrapeTimeout: 'string',
              scheme: { enum: ['http', 'https'] },
              honorLabels: 'boolean',
            },
          },
        },
      },
      required: ['selector', 'endpoints'],
    },
  },
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
};

const certificate: Shape = {
  fields: {
    apiVersion: { enum: ['cert-manager.io/v1'] },
    kind: { enum: ['Certificate'] },
    metadata: objectMeta,
    spec: {
      fields: {
        secretName: 'string',
        commonName: 'string',
        duration: 'string',
        renewBefore: 'string',
        dnsNames: { list: 'string' },
        ipAddresses: { list: 'string' },
        usages: { list: { enum: ['server auth', 'client auth', 'digital signature', 'key encipherment'] } },
        privateKey: {
          fields: {
            algorithm: { enum: ['RSA', 'ECDSA', 'Ed25519'] },
            size: 'number',
            encoding: { enum: ['PKCS1', 'PKCS8'] },
            rotationPolicy: { enum: ['Never', 'Always'] },
          },
        },
        issuerRef: { fields: { name: 'string', kind: 'string', group: 'string' }, required: ['name'] },
      },
      required: ['secretName', 'issuerRef'],
    },
  },
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
};

export const SHAPES: Record<string, Shape> = {
  'monitoring.coreos.com/v1/ServiceMonitor': serviceMonitor,
  'cert-manager.io/v1/Certificate': certificate,
};

const at = (path: string, key: string | number) =>
  typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key;

export function checkShape(shape: Shape, value: unknown, path: string): string[] {
  const name = path || '(object)';
  if (typeof shape === 'string') {
    return typeof value === shape ? [] : [`${name}: expected ${shape}, got ${typeof value}`];
  }
  if ('enum' in shape) {
    return shape.enum.includes(value as string) ? [] : [`${name}: expected one of ${shape.enum.join(', ')}`];
  }
  if ('list' in shape) {
    if (!Array.isArray(value)) return [`${name}: expected a list`];
    return value.flatMap((v, i) => checkShape(shape.list, v, at(path, i)));
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return [`${name}: expected an object`];
  }
  const entries = Object.entries(value);
  if ('map' in shape) return entries.flatMap(([k, v]) => checkShape(shape.map, v, at(path, k)));
  const problems = (shape.required ?? []).filter((k) => !(k in value)).map((k) => `${at(path, k)}: required`);
  for (const [k, v] of entries) {
    const field = shape.fields[k];
    problems.push(...(field ? checkShape(field, v, at(path, k)) : [`unknown key ${at(path, k)}`]));
  }
  return problems;
}
