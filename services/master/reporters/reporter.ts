// A configured reporter, made once at start: its name, its generators (the configured ones,
// else its kind's defaults, as Buildbot's _create_default_generators) and its sender, with
// its credentials read from where the configuration says (the value, `<key>_env` or
// `<key>_file`). What differs by kind is in its file under kinds/. A credential that cannot
// be read stops the master's start, as a worker's password does.
import { readFileSync } from 'node:fs';
import { ConfigError } from '../../core/config/errors.js';
import { type MasterConfig, type ReporterConfig, reporterName } from '../../core/config/master-config.js';
import type { ReportEventKind } from './events.js';
import { createGenerator, type Generator, type Needs } from './generators.js';
import { reporterKind } from './kinds/index.js';
import type { Sender } from './report.js';

export interface Reporter {
  readonly name: string;
  readonly type: ReporterConfig['type'];
  readonly generators: readonly Generator[];
  readonly sender: Sender;
}

/** The credential `key` of `where` (the value, `key_env` or `key_file`); undefined if none is set. */
export function credential(
  where: Record<string, unknown>,
  key: string,
  env: Readonly<Record<string, string | undefined>>,
  owner: string,
): string | undefined {
  const value = where[key];
  if (typeof value === 'string') return value;
  const name = where[`${key}_env`];
  if (typeof name === 'string') {
    const v = env[name];
    if (!v) throw new ConfigError('CONFIG_REFERENCE', `${owner}: environment variable ${name} is not set`);
    return v;
  }
  const file = where[`${key}_file`];
  if (typeof file !== 'string') return undefined;
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new ConfigError(
      'CONFIG_FILE_UNREADABLE',
      `${owner}: cannot read ${file}: ${(err as Error).message}`,
    );
  }
}

export function createReporter(
  r: ReporterConfig,
  env: Readonly<Record<string, string | undefined>>,
): Reporter {
  const kind = reporterKind(r);
  const owner = `reporter ${reporterName(r)}`;
  return {
    name: reporterName(r),
    type: r.type,
    generators: (r.generators ?? kind.defaultGenerators).map(createGenerator),
    sender: kind.sender(r, (where, key) => credential(where, key, env, owner)),
  };
}

/** Does any generator of the reporter want this event? */
export const wants = (r: Reporter, kind: ReportEventKind): boolean => r.generators.some((g) => g.wants(kind));

/** What the wanting generators need loaded, together. */
export function needs(r: Reporter, kind: ReportEventKind): Needs {
  const all = r.generators.filter((g) => g.wants(kind)).map((g) => g.needs(kind));
  return {
    steps: all.some((n) => n.steps),
    logs: all.some((n) => n.logs),
    previousBuild: all.some((n) => n.previousBuild),
  };
}

/** Every reporter of the configuration; throws a ConfigError for a template or a credential. */
export function createReporters(
  config: MasterConfig,
  env: Readonly<Record<string, string | undefined>>,
): Reporter[] {
  const problems: string[] = [];
  const made: Reporter[] = [];
  config.reporters.forEach((r, i) => {
    try {
      made.push(createReporter(r, env));
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      // nunjucks' compile errors: a template the configuration holds.
      problems.push(`reporters[${i}]: ${(err as Error).message.replace(/\s+/g, ' ').trim()}`);
    }
  });
  if (problems.length) throw new ConfigError('CONFIG_SCHEMA', 'the reporters cannot be made', problems);
  return made;
}

/** Make the configuration's reporters and let them go: throws what createReporters throws. */
export function checkReporters(
  config: MasterConfig,
  env: Readonly<Record<string, string | undefined>>,
): void {
  for (const r of createReporters(config, env)) r.sender.close?.();
}
