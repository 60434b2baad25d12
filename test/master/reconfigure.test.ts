// What a master's reload compares (services/master/reconfigure.ts): the sections that changed,
// by hash, and the keys only a restart takes on, refused with CONFIG_RESTART_REQUIRED naming
// them. The reload of real processes is test/e2e/master-reload.test.ts.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../services/core/config/errors.js';
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import {
  changedSections,
  checkReloadable,
  RESTART_ONLY_KEYS,
  removedWorkers,
} from '../../services/master/reconfigure.js';
import { masterYaml } from '../helpers/master-config.js';

const config = (override: Parameters<typeof masterYaml>[0] = {}) =>
  parseMasterConfig(masterYaml(override), 'the test');

describe("a master's reload", () => {
  it('names the sections that changed, and none for the same settings', () => {
    const before = config();
    expect(changedSections(before, config())).toEqual([]);
    const after = config({ builders: [{ name: 'quick', steps: [{ type: 'shell', command: 'false' }] }] });
    expect(changedSections(before, after)).toEqual(['builders']);
  });

  it('takes on builders, workers and schedulers, and refuses what needs a restart, naming it', () => {
    const before = config();
    expect(() =>
      checkReloadable(before, config({ workers: [{ name: 'new', password: 'p' }] })),
    ).not.toThrow();
    const changed = config({ log_compression: 'none', master_expiry_seconds: 900 });
    let refusal: unknown;
    try {
      checkReloadable(before, changed);
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toBeInstanceOf(ConfigError);
    expect((refusal as ConfigError).code).toBe('CONFIG_RESTART_REQUIRED');
    expect((refusal as ConfigError).message).toContain('master_expiry_seconds, log_compression');
    expect(RESTART_ONLY_KEYS).toContain('protocols');
  });

  it('names the workers the new configuration no longer has', () => {
    const before = config({ workers: [{ name: 'gone', password: 'p' }] });
    expect(removedWorkers(before, config())).toEqual(['gone']);
    expect(removedWorkers(config(), before)).toEqual([]);
  });
});
