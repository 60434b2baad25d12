// What a reporter kind's schema is made of: the fields every kind has (its name, its
// generators), credentials given as a value, `<key>_env` or `<key>_file` (as a worker's
// password is), and the checks a zod shape cannot say, which run once the shape is read.
import { z } from 'zod';
import { identifier } from '../identifiers.js';
import { generator } from './generators.js';

/** `key`, `key_env` and `key_file`: at most one of them (the kind's check says if one is required). */
export function secret<K extends string>(key: K) {
  return {
    [key]: z.string().min(1).optional(),
    [`${key}_env`]: z.string().min(1).optional(),
    [`${key}_file`]: z.string().min(1).optional(),
  } as Record<K | `${K}_env` | `${K}_file`, z.ZodOptional<z.ZodString>>;
}

/** How many of `key`, `key_env` and `key_file` are given. */
export function given(r: Record<string, unknown>, key: string): number {
  return [key, `${key}_env`, `${key}_file`].filter((k) => r[k] !== undefined).length;
}

export const common = {
  // The reporter's name: its queue and its label in /metrics (default: its type).
  name: identifier.optional(),
  generators: z.array(generator).min(1).optional(),
};

/** What a kind's check may say, about the reporter's entry or a key under it. */
export interface Checks {
  /** At most one (exactly one if `required`) of `key`, `key_env`, `key_file`, in the entry or under `at`. */
  once(key: string, required: boolean, at?: string): void;
  problem(path: string[], message: string): void;
}

export interface ReporterSchema<S extends z.AnyZodObject> {
  readonly schema: S;
  readonly check?: (r: z.output<S>, checks: Checks) => void;
}

/** A kind's schema, `type` its name, and its checks beyond the shape. */
export const reporterSchema = <S extends z.AnyZodObject>(
  schema: S,
  check?: (r: z.output<S>, checks: Checks) => void,
): ReporterSchema<S> => (check ? { schema, check } : { schema });

/** The Checks of one reporter entry, as issues of its refinement. */
export function checksOf(r: Record<string, unknown>, ctx: z.RefinementCtx): Checks {
  return {
    once(key, required, at) {
      const n = given(at === undefined ? r : (r[at] as Record<string, unknown>), key);
      if (n > 1 || (required && n === 0))
        ctx.addIssue({
          code: 'custom',
          path: at === undefined ? [] : [at],
          message: `expected ${required ? 'exactly' : 'at most'} one of ${key}, ${key}_env, ${key}_file`,
        });
    },
    problem: (path, message) => ctx.addIssue({ code: 'custom', path, message }),
  };
}
