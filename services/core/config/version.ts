// Which configuration a process runs (issue 33, section 3): a hash of the configuration as
// parsed, and when it was loaded, shown on the probe port's /readyz (`config`) and as metrics,
// so that during a rollout an operator sees which master or API pod runs which version.
//
// The hash is of the parsed configuration (defaults filled, keys in the schema's order), not
// of the file: an edit of a comment or of the layout is no new version, and two processes
// that read the same settings from differently written files report the same hash. Secrets
// are names of variables and files in it (password_env, users_file), and a password hash
// goes through SHA-256 here: the 16 hex digits shown tell nothing of either.
import { createHash } from 'node:crypto';
import { Gauge, type Registry } from 'prom-client';
import type { MasterConfig } from './master-config.js';

export interface ConfigVersion {
  /** The first 16 hex digits of the SHA-256 of the parsed configuration's JSON. */
  hash: string;
  /** Seconds since the epoch. */
  loaded_at: number;
}

export function configVersion(config: MasterConfig, now = Date.now()): ConfigVersion {
  const hash = createHash('sha256').update(JSON.stringify(config)).digest('hex').slice(0, 16);
  return { hash, loaded_at: Math.floor(now / 1000) };
}

/**
 * flotilla_config_info{hash} (always 1) and flotilla_config_loaded_timestamp_seconds, read
 * from `current` at each scrape.
 */
export function configMetrics(registry: Registry, current: () => ConfigVersion): void {
  new Gauge({
    name: 'flotilla_config_info',
    help: 'The configuration this process runs: its hash (1 for the loaded one).',
    labelNames: ['hash'],
    registers: [registry],
    collect() {
      this.reset();
      this.set({ hash: current().hash }, 1);
    },
  });
  new Gauge({
    name: 'flotilla_config_loaded_timestamp_seconds',
    help: 'When the configuration this process runs was loaded.',
    registers: [registry],
    collect() {
      this.set(current().loaded_at);
    },
  });
}
