// A master configuration for a test: a base (test/e2e/master.yaml, or any YAML the test
// gives) with a typed override deep-merged over it, checked against the master's schema and
// serialized once. A test says what it changes as data (`{ workers: [{ name: 'w1',
// max_builds: 1 }] }`) instead of string-replacing YAML, which broke silently whenever the
// base file's spelling changed (the replace then matched nothing and the test ran on the
// unchanged configuration).
//
// How the override merges (mergeConfig):
// - objects merge key by key, at every depth;
// - a list whose entries have a `name` (workers, builders, schedulers, force_schedulers,
//   locks...) merges entry by entry: an entry naming one of the base's merges into it, a new
//   name is added at the end; an override that names every entry of the base gives the
//   order too (to put a new builder first, list it, then the base's: baseConfig());
// - any other value (a scalar, a list without names) replaces the base's; `undefined` leaves it.
//
// Text edits that stay, because the text is the subject: test/deploy/local-config.test.ts edits
// the copy npm start made, as a user would, and checks the next start keeps it byte for byte;
// test/import/importer.test.ts edits a Buildbot master.cfg (Python), and each of those tests
// fails if its replace matched nothing (the import would not find what it expects).
import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import type { z } from 'zod';
import { type masterConfigSchema, parseMasterConfig } from '../../services/core/config/master-config.js';

/** The configuration as written in YAML (the schema's input, before defaults). */
type ConfigInput = z.input<typeof masterConfigSchema>;

type DeepPartial<T> = T extends readonly (infer E)[]
  ? readonly DeepPartial<E>[]
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

/** What a test changes of a master configuration (see the merge rules above). */
export type ConfigOverride = DeepPartial<ConfigInput>;
/** A builder as an override adds or changes one. */
export type BuilderOverride = NonNullable<ConfigOverride['builders']>[number];
/** A force scheduler as an override adds or changes one. */
export type ForceSchedulerOverride = NonNullable<ConfigOverride['force_schedulers']>[number];

/** The end-to-end tests' configuration: real commands on real workers. */
export const E2E_MASTER_YAML = 'test/e2e/master.yaml';

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);
const named = (v: unknown): v is Plain & { name: string } => isPlain(v) && typeof v.name === 'string';

/** `override` merged over `base` (neither is changed). */
export function mergeConfig(base: unknown, override: unknown): unknown {
  if (override === undefined) return base;
  if (isPlain(base) && isPlain(override)) {
    const out: Plain = { ...base };
    for (const [k, v] of Object.entries(override)) out[k] = mergeConfig(base[k], v);
    return out;
  }
  if (Array.isArray(base) && Array.isArray(override) && base.every(named) && override.every(named)) {
    const given = (entry: Plain & { name: string }) => override.find((o) => o.name === entry.name);
    if (base.every(given)) {
      return override.map((entry) => {
        const b = base.find((x) => x.name === entry.name);
        return b ? mergeConfig(b, entry) : entry;
      });
    }
    const out: unknown[] = [...base];
    for (const entry of override) {
      const i = out.findIndex((b) => (b as Plain).name === entry.name);
      if (i >= 0) out[i] = mergeConfig(out[i], entry);
      else out.push(entry);
    }
    return out;
  }
  return override;
}

/** The base (YAML text; default: test/e2e/master.yaml) as data, as written: what an override may list. */
export function baseConfig(base?: string): ConfigInput {
  return parse(base ?? readFileSync(E2E_MASTER_YAML, 'utf8')) as ConfigInput;
}

/**
 * The YAML of `base` (YAML text; default: test/e2e/master.yaml) with `override` merged over
 * it, serialized. Throws, naming the problems, if the master would refuse the result (so a
 * mistake in an override fails the test at once, not as a master that never gets ready).
 */
export function masterYaml(override: ConfigOverride = {}, base?: string): string {
  const yaml = stringify(mergeConfig(baseConfig(base), override));
  try {
    parseMasterConfig(yaml, "the test's master configuration");
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${yaml}`);
  }
  return yaml;
}
