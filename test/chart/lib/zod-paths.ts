// The key paths a zod (v3) schema names, in the notation of schemaPaths() in schema.ts, so
// the chart's description of the master configuration can be compared with the master's.
import type { ZodTypeAny } from 'zod';

const at = (path: string, key: string) => (path ? `${path}.${key}` : key);

export function zodPaths(schema: ZodTypeAny, path = ''): Set<string> {
  const paths = new Set<string>();
  const add = (more: Set<string>) => {
    for (const p of more) paths.add(p);
  };
  const def = schema._def as any;
  switch (def.typeName) {
    case 'ZodObject':
      for (const [k, v] of Object.entries<ZodTypeAny>(def.shape())) {
        paths.add(at(path, k));
        add(zodPaths(v, at(path, k)));
      }
      break;
    case 'ZodDefault':
    case 'ZodOptional':
    case 'ZodNullable':
      add(zodPaths(def.innerType, path));
      break;
    case 'ZodEffects':
      add(zodPaths(def.schema, path));
      break;
    case 'ZodArray':
      add(zodPaths(def.type, `${path}[]`));
      break;
    case 'ZodRecord':
      add(zodPaths(def.valueType, `${path}{}`));
      break;
    case 'ZodUnion':
    case 'ZodDiscriminatedUnion':
      for (const o of def.options as ZodTypeAny[]) add(zodPaths(o, path));
      break;
    default:
      // A leaf: string, number, boolean, enum, literal, unknown.
      break;
  }
  return paths;
}
