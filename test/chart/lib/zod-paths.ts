// The key paths a zod (v3) schema names, in the notation of schemaPaths() in schema.ts, so
// the chart's description of the master configuration can be compared with the master's.
import type { ZodTypeAny } from 'zod';

const at = (path: string, key: string) => (path ? `${path}.${key}` : key);

export function zodPaths(
  schema: ZodTypeAny,
  path = '',
  inside: ReadonlySet<ZodTypeAny> = new Set(),
): Set<string> {
  const paths = new Set<string>();
  const add = (more: Set<string>) => {
    for (const p of more) paths.add(p);
  };
  const def = schema._def as any;
  switch (def.typeName) {
    case 'ZodObject':
      for (const [k, v] of Object.entries<ZodTypeAny>(def.shape())) {
        paths.add(at(path, k));
        add(zodPaths(v, at(path, k), inside));
      }
      break;
    case 'ZodDefault':
    case 'ZodOptional':
    case 'ZodNullable':
      add(zodPaths(def.innerType, path, inside));
      break;
    case 'ZodLazy':
      // Recursive schemas (nested force parameters) are walked once per branch.
      if (!inside.has(schema)) add(zodPaths(def.getter(), path, new Set([...inside, schema])));
      break;
    case 'ZodEffects':
      add(zodPaths(def.schema, path, inside));
      break;
    case 'ZodArray':
      add(zodPaths(def.type, `${path}[]`, inside));
      break;
    case 'ZodRecord':
      add(zodPaths(def.valueType, `${path}{}`, inside));
      break;
    case 'ZodUnion':
    case 'ZodDiscriminatedUnion':
      for (const o of def.options as ZodTypeAny[]) add(zodPaths(o, path, inside));
      break;
    default:
      // A leaf: string, number, boolean, enum, literal, unknown.
      break;
  }
  return paths;
}
