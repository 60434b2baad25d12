// Everything the master checks in its configuration before it starts anything: the schema and
// references (core's loader), the reporters' credentials and templates, the schedulers, the
// liveness timings. One function, used by the master's start and by `npm run checkconfig`
// (checkconfig.ts), so that a file the check passes is a file the master starts with.
import { ConfigError } from '../core/config/errors.js';
import { loadMasterConfig, type MasterConfig } from '../core/config/master-config.js';
import { livenessProblems } from './liveness.js';
import { checkReporters } from './reporters/reporter.js';
import { schedulerConfigProblems } from './schedulers/index.js';

/** Load and check `path`; a ConfigError names every problem. `more` adds the caller's own checks. */
export function checkMasterConfig(
  path: string,
  processEnv: Readonly<Record<string, string | undefined>>,
  more: (config: MasterConfig) => string[] = () => [],
): MasterConfig {
  const config = loadMasterConfig(path);
  // The reporters' credentials and templates: a file that cannot be read fails the start.
  checkReporters(config, processEnv);
  // Problems the schema cannot see (a cron expression that never fires, for one) fail the start too.
  const bad = [...schedulerConfigProblems(config), ...more(config), ...livenessProblems(config)];
  if (bad.length) throw new ConfigError('CONFIG_SCHEMA', `${path} is invalid`, bad);
  return config;
}
