// Walks over values.schema.json: which values it describes, which of its objects are
// left open, and the paths of every key it names (to compare with another schema).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CHART } from './helm.js';

export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  definitions?: Record<string, JsonSchema>;
  [key: string]: unknown;
};

export function chartSchema(): JsonSchema {
  return JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8'));
}

export function chartValues(): Record<string, unknown> {
  return parse(readFileSync(join(CHART, 'values.yaml'), 'utf8'));
}

/** Follows local references (#/definitions/x). */
export function resolve(root: JsonSchema, node: JsonSchema): JsonSchema {
  let n = node;
  while (n.$ref) {
    const target = n.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<any>((at, part) => at?.[part], root);
    if (!target) throw new Error(`unresolved $ref ${n.$ref}`);
    n = target;
  }
  return n;
}

const at = (path: string, key: string) => (path ? `${path}.${key}` : key);
const alternatives = (n: JsonSchema) => n.oneOf ?? n.anyOf;

/** The paths of every key in `value` that `schema` does not describe. */
export function undescribedKeys(root: JsonSchema, schema: JsonSchema, value: unknown, path = ''): string[] {
  const node = resolve(root, schema);
  const options = alternatives(node);
  if (options) {
    // Described when one alternative describes it all; else report the closest one.
    const tries = options.map((o) => undescribedKeys(root, o, value, path));
    return tries.reduce((best, t) => (t.length < best.length ? t : best));
  }
  if (Array.isArray(value)) {
    return node.items ? value.flatMap((v, i) => undescribedKeys(root, node.items!, v, `${path}[${i}]`)) : [];
  }
  if (value === null || typeof value !== 'object') return [];
  // A schema that says nothing about keys ({}: any value at all) accepts them all.
  if (node.properties === undefined && node.additionalProperties === undefined) return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const field = node.properties?.[k];
    if (field) return undescribedKeys(root, field, v, at(path, k));
    const extra = node.additionalProperties;
    if (extra && typeof extra === 'object') return undescribedKeys(root, extra, v, at(path, k));
    return extra === true ? [] : [at(path, k)];
  });
}

/** Object schemas that leave additionalProperties unsaid (and so accept any key). */
export function openObjects(root: JsonSchema, node: JsonSchema = root, path = '#'): string[] {
  const found: string[] = [];
  const isObject = node.type === 'object' || node.properties !== undefined;
  if (isObject && node.additionalProperties === undefined) found.push(path);
  for (const [k, v] of Object.entries(node.properties ?? {}))
    found.push(...openObjects(root, v, `${path}/properties/${k}`));
  for (const [k, v] of Object.entries(node.definitions ?? {}))
    found.push(...openObjects(root, v, `${path}/definitions/${k}`));
  if (node.items) found.push(...openObjects(root, node.items, `${path}/items`));
  if (node.additionalProperties && typeof node.additionalProperties === 'object') {
    found.push(...openObjects(root, node.additionalProperties, `${path}/additionalProperties`));
  }
  for (const [i, o] of (alternatives(node) ?? []).entries()) {
    found.push(...openObjects(root, o, `${path}/oneOf/${i}`));
  }
  return found;
}

/**
 * Every key path a schema names: `a.b` for a property, `a[]` into list items, `a{}` into
 * map values. Alternatives contribute all their keys. A recursive definition stops where
 * it first contains itself, as zodPaths() stops at a recursive z.lazy.
 */
export function schemaPaths(
  root: JsonSchema,
  schema: JsonSchema,
  path = '',
  inside: ReadonlySet<string> = new Set(),
): Set<string> {
  const paths = new Set<string>();
  // A definition that contains itself (nested force parameters) is walked once per branch.
  if (schema.$ref && inside.has(schema.$ref)) return paths;
  const within = schema.$ref ? new Set([...inside, schema.$ref]) : inside;
  const node = resolve(root, schema);
  const add = (more: Set<string>) => {
    for (const p of more) paths.add(p);
  };
  for (const o of alternatives(node) ?? []) add(schemaPaths(root, o, path, within));
  if (node.items) add(schemaPaths(root, node.items, `${path}[]`, within));
  if (node.additionalProperties && typeof node.additionalProperties === 'object') {
    add(schemaPaths(root, node.additionalProperties, `${path}{}`, within));
  }
  for (const [k, v] of Object.entries(node.properties ?? {})) {
    paths.add(at(path, k));
    add(schemaPaths(root, v, at(path, k), within));
  }
  return paths;
}
