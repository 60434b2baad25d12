// A worker's settings by name (services/master/worker-configs.ts): each configuration object
// answers from its own workers, so a reload's new settings are read at once.
import { expect, it } from 'vitest';
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import { workerConfig } from '../../services/master/worker-configs.js';

const config = (maxBuilds: number) =>
  parseMasterConfig(`
workers:
  - { name: w1, password: x, max_builds: ${maxBuilds} }
  - { name: w2, password: x }
`);

it("answers each configuration's own settings, and nothing for a worker it lacks", () => {
  const before = config(1);
  const after = config(3);
  expect(workerConfig(before, 'w1')?.max_builds).toBe(1);
  expect(workerConfig(after, 'w1')?.max_builds).toBe(3);
  expect(workerConfig(before, 'w1')?.max_builds).toBe(1);
  expect(workerConfig(after, 'w2')?.name).toBe('w2');
  expect(workerConfig(after, 'w3')).toBeUndefined();
});
