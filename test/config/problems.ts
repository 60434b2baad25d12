// What a master configuration is refused for: the problems its ConfigError lists.
import { ConfigError } from '../../services/core/config/errors.js';
import { parseMasterConfig } from '../../services/core/config/master-config.js';

/** The problems `yaml` is refused for; throws if it is accepted. */
export function problems(yaml: string): string[] {
  try {
    parseMasterConfig(yaml);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  throw new Error('expected the configuration to be refused');
}
