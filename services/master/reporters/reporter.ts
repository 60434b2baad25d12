// A configured reporter, made once at start: its name, its generators (the configured ones,
// else its class's defaults, as Buildbot's _create_default_generators) and its sender, with
// its credentials read from where the configuration says (the value, `<key>_env` or
// `<key>_file`). A credential that cannot be read stops the master's start, as a worker's
// password does.
import { readFileSync } from 'node:fs';
import { ConfigError } from '../../core/config/errors.js';
import {
  type GeneratorConfig,
  type MasterConfig,
  type ReporterConfig,
  reporterName,
} from '../../core/config/master-config.js';
import type { ReportEventKind } from './events.js';
import { message, renderable } from './formatters.js';
import { createGenerator, type Generator, type Needs } from './generators.js';
import { githubSender } from './github.js';
import { gitlabSender } from './gitlab.js';
import { httpSender } from './http.js';
import { mailSender } from './mail.js';
import type { Sender } from './report.js';

export interface Reporter {
  readonly name: string;
  readonly type: ReporterConfig['type'];
  readonly generators: readonly Generator[];
  readonly sender: Sender;
}

const filters = { add_patch: false } as const;

function defaultGenerators(r: ReporterConfig): GeneratorConfig[] {
  switch (r.type) {
    case 'github':
    case 'gitlab':
      return [
        { type: 'build_request', formatter: renderable('Build pending.'), ...filters },
        {
          type: 'build_start_end',
          start_formatter: renderable('Build started.'),
          end_formatter: renderable('Build done.'),
          ...filters,
        },
      ];
    case 'http':
      return [
        {
          type: 'build_status',
          mode: ['failing', 'passing', 'warnings'],
          report_new: true,
          message_formatter: { type: 'json' },
          ...filters,
        },
      ];
    case 'mail':
      return [
        {
          type: 'build_status',
          mode: ['failing', 'passing', 'warnings'],
          report_new: false,
          message_formatter: message('html'),
          add_patch: true,
        },
      ];
  }
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

function sender(r: ReporterConfig, env: Readonly<Record<string, string | undefined>>): Sender {
  const owner = `reporter ${reporterName(r)}`;
  const rec = r as Record<string, unknown>;
  switch (r.type) {
    case 'github':
      return githubSender(r, credential(rec, 'token', env, owner)!);
    case 'gitlab':
      return gitlabSender(r, credential(rec, 'token', env, owner)!);
    case 'http': {
      const password = r.auth ? credential(r.auth, 'password', env, owner) : undefined;
      const hmacSecret = credential(rec, 'hmac_secret', env, owner);
      return httpSender(r, {
        ...(password !== undefined ? { password } : {}),
        ...(hmacSecret ? { hmacSecret } : {}),
      });
    }
    case 'mail':
      return mailSender(r, credential(rec, 'smtpPassword', env, owner));
  }
}

export function createReporter(
  r: ReporterConfig,
  env: Readonly<Record<string, string | undefined>>,
): Reporter {
  return {
    name: reporterName(r),
    type: r.type,
    generators: (r.generators ?? defaultGenerators(r)).map(createGenerator),
    sender: sender(r, env),
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
