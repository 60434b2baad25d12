// What a reporter kind is to the master: the generators it has when the configuration names
// none, and how it sends. The rest (queues, retries, catching up, loading the build) is the
// same for every kind (../index.ts, ../deliver.ts).
import type { GeneratorConfig, ReporterConfig } from '../../../core/config/master-config.js';
import type { Sender } from '../report.js';

/**
 * A credential `key` of `where` (the configuration's value, `key_env` or `key_file`), read
 * at start; undefined if none is set, a ConfigError if it cannot be read.
 */
export type Credential = (where: Record<string, unknown>, key: string) => string | undefined;

export interface ReporterKind<C extends ReporterConfig> {
  /** Its class's defaults, as Buildbot's _create_default_generators. */
  readonly defaultGenerators: readonly GeneratorConfig[];
  /** Its sending half, made once at start. */
  sender(config: C, credential: Credential): Sender;
}
