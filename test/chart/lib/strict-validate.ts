// Offline validation of a rendered object: the kubernetes-models schema (types, enums,
// required fields) and, beyond it, unknown keys.
//
// kubernetes-models' validate() accepts keys its schema does not name (the OpenAPI schemas
// have no additionalProperties: false), so a misspelled `readinesProbe` would pass and the
// API server would drop it (or reject it under strict field validation). The models carry
// no plain JSON schema to compare against, only compiled validators; but a compiled
// validator reads every property its schema names, and reads every key of a map (labels,
// data). So validating a copy whose objects record the keys read finds the unknown ones:
// a key present but never read is a key the schema does not know.
import type { K8sObject } from './helm.js';
import { MODELS } from './models.js';
import { checkShape, SHAPES } from './shapes.js';

interface Tracked {
  path: string;
  keys: string[];
  read: Set<string>;
  // Whether the validator looked into this object at all: one under an unknown key is
  // never reached, and only that key is reported, not everything below it.
  reached: boolean;
}

function track(value: unknown, path: string, seen: Tracked[]): unknown {
  if (Array.isArray(value)) return value.map((v, i) => track(v, `${path}[${i}]`, seen));
  if (value === null || typeof value !== 'object') return value;
  const target: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) target[k] = track(v, path ? `${path}.${k}` : k, seen);
  const tracked: Tracked = { path, keys: Object.keys(target), read: new Set(), reached: false };
  seen.push(tracked);
  const note = (key: string | symbol) => {
    tracked.reached = true;
    if (typeof key === 'string') tracked.read.add(key);
  };
  return new Proxy(target, {
    get(t, key, receiver) {
      note(key);
      return Reflect.get(t, key, receiver);
    },
    has(t, key) {
      note(key);
      return Reflect.has(t, key);
    },
    ownKeys(t) {
      // Enumerating an object (a map's validator does) reads every key.
      for (const k of Reflect.ownKeys(t)) note(k);
      return Reflect.ownKeys(t);
    },
  });
}

function where(o: K8sObject): string {
  return `${o.kind}/${o.metadata?.name}`;
}

/** Every problem with one object; empty when it is valid and has no unknown key. */
export function validateStrict(object: K8sObject): string[] {
  const id = `${object.apiVersion}/${object.kind}`;
  const shape = SHAPES[id];
  if (shape) return checkShape(shape, object, '').map((p) => `${where(object)}: ${p}`);
  const Model = MODELS[id];
  if (!Model) return [`${where(object)}: no model for ${id} (add it to test/chart/lib/models.ts)`];

  // The schema itself, as kubernetes-models documents it.
  try {
    new Model(object).validate();
  } catch (err) {
    return [`${where(object)}: ${(err as Error).message}`];
  }
  // The same validator over a recording copy, for the keys it never looked at.
  const seen: Tracked[] = [];
  Model.prototype.validate.call(track(object, '', seen));
  return seen
    .filter((t) => t.reached)
    .flatMap((t) =>
      t.keys
        .filter((k) => !t.read.has(k))
        .map((k) => `${where(object)}: unknown key ${t.path ? `${t.path}.${k}` : k}`),
    );
}
