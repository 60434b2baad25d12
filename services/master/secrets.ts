// The secrets providers of the configuration's `secrets` section (its schema says what each
// is), one maker per kind: a kind the schema knows and the map lacks does not compile. A
// directory is checked when the master starts, as Buildbot checks it at config load; its files
// are read when a build asks, so a rotated secret is used by the next build without a restart
// (Buildbot reads them once per reconfig). pass and Vault (secret-providers/) are read as a
// build starts, for the names its builder's templates hold (`load`).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../core/config/errors.js';
import type { SecretsProviderConfig } from '../core/config/master-config.js';
import type { Logger } from '../core/telemetry/logger.js';
import { passProvider } from './secret-providers/pass.js';
import { vaultProvider } from './secret-providers/vault.js';

export interface SecretsProvider {
  /** The secret's value, or undefined when this provider does not have it. */
  get(name: string): string | undefined;
  /** For a provider that cannot be asked while a template renders: read these names now. */
  load?(names: readonly string[]): Promise<void>;
}

type Env = Record<string, string | undefined>;
type Kinds = {
  [K in SecretsProviderConfig['type']]: (
    cfg: Extract<SecretsProviderConfig, { type: K }>,
    env: Env,
    log: Logger | undefined,
  ) => SecretsProvider;
};

// A secret name is one file name: nothing that climbs out of the directory.
const SAFE_NAME = /^(?!\.\.?$)[^/\\\0]+$/;

function directory(cfg: Extract<SecretsProviderConfig, { type: 'directory' }>): SecretsProvider {
  let files: string[];
  try {
    files = readdirSync(cfg.dirname);
  } catch (err) {
    throw new ConfigError(
      'CONFIG_REFERENCE',
      `secrets: directory ${cfg.dirname} cannot be read: ${(err as Error).message}`,
    );
  }
  for (const f of files) {
    if (!cfg.suffixes.some((s) => f.endsWith(s))) continue;
    const mode = statSync(join(cfg.dirname, f)).mode & 0o777;
    if (mode & 0o077)
      throw new ConfigError(
        'CONFIG_REFERENCE',
        `secrets: permissions 0o${mode.toString(8)} on file ${f} are too open: secret files must not be accessible by group or others`,
      );
  }
  return {
    get(name) {
      if (!SAFE_NAME.test(name)) return undefined;
      for (const suffix of cfg.suffixes) {
        let text: string;
        try {
          text = readFileSync(join(cfg.dirname, name + suffix), 'utf8');
        } catch {
          continue;
        }
        return cfg.strip ? text.replace(/[\r\n]+$/, '') : text;
      }
      return undefined;
    },
  };
}

function environment(
  cfg: Extract<SecretsProviderConfig, { type: 'environment' }>,
  env: Record<string, string | undefined>,
): SecretsProvider {
  return { get: (name) => env[cfg.prefix + name] };
}

const KINDS: Kinds = {
  directory: (cfg) => directory(cfg),
  environment: (cfg, env) => environment(cfg, env),
  pass: passProvider,
  vault: vaultProvider,
};

/** The providers in order, as one: the first that has a name answers. */
export function secretsProviders(
  configs: readonly SecretsProviderConfig[],
  env: Env,
  log?: Logger,
): SecretsProvider {
  const providers = configs.map((c) => (KINDS[c.type] as Kinds[typeof c.type])(c as never, env, log));
  return {
    async load(names) {
      if (names.length) await Promise.all(providers.map((p) => p.load?.(names)));
    },
    get(name) {
      for (const p of providers) {
        const v = p.get(name);
        if (v !== undefined) return v;
      }
      return undefined;
    },
  };
}
