// The clusters' configuration override (test/helpers/master-config.ts): what a test gives as
// data lands where it says, named lists merge by name, the base files survive being read
// and written again unchanged, and an override the master would refuse fails at once.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import { E2E_MASTER_YAML, masterYaml, mergeConfig } from '../helpers/master-config.js';

describe('mergeConfig', () => {
  it('merges objects at every depth, named lists by name, and replaces anything else', () => {
    const base = {
      www: { page_cache: { max_staleness_ms: 0 }, rate_limit: { enabled: true } },
      workers: [
        { name: 'w1', max_builds: 2, properties: { os: 'x' } },
        { name: 'w2', max_builds: 2 },
      ],
      tags: ['a', 'b'],
      title: 'base',
    };
    const merged = mergeConfig(base, {
      www: { rate_limit: { enabled: false } },
      workers: [
        { name: 'w1', max_builds: 1 },
        { name: 'w3', password: 'q' },
      ],
      tags: ['c'],
      title: undefined,
    });
    expect(merged).toEqual({
      www: { page_cache: { max_staleness_ms: 0 }, rate_limit: { enabled: false } },
      workers: [
        { name: 'w1', max_builds: 1, properties: { os: 'x' } },
        { name: 'w2', max_builds: 2 },
        { name: 'w3', password: 'q' },
      ],
      tags: ['c'],
      title: 'base',
    });
    // The base is left as it was (a shared base must not take one test's changes).
    expect(base.workers[0]!.max_builds).toBe(2);
    expect(base.www.rate_limit.enabled).toBe(true);
  });

  it("takes a named list's order from an override that names every entry of the base", () => {
    const base = { builders: [{ name: 'a', tags: ['x'] }, { name: 'b' }] };
    // A new entry first: builder ids follow the configuration's order.
    expect(mergeConfig(base, { builders: [{ name: 'new' }, { name: 'a' }, { name: 'b' }] })).toEqual({
      builders: [{ name: 'new' }, { name: 'a', tags: ['x'] }, { name: 'b' }],
    });
    // Naming only some of them keeps the base's order, new names at the end.
    expect(mergeConfig(base, { builders: [{ name: 'new' }, { name: 'b', tags: ['y'] }] })).toEqual({
      builders: [{ name: 'a', tags: ['x'] }, { name: 'b', tags: ['y'] }, { name: 'new' }],
    });
  });
});

describe('masterYaml', () => {
  it.each([E2E_MASTER_YAML, 'test/e2e/buildbot-workers.yaml'])(
    '%s, read and written again without an override, is the same configuration',
    (file) => {
      const text = readFileSync(file, 'utf8');
      expect(parseMasterConfig(masterYaml({}, text))).toEqual(parseMasterConfig(text));
    },
  );

  it('gives the master what the override says, and the rest of the base', () => {
    const config = parseMasterConfig(
      masterYaml({
        master_expiry_seconds: 10,
        workers: [{ name: 'w1', max_builds: 1 }],
        locks: [{ name: 'solo', type: 'master' }],
        builders: [{ name: 'locked', workers: ['w1'], steps: [{ type: 'shell', command: 'true' }] }],
      }),
    );
    const base = parse(readFileSync(E2E_MASTER_YAML, 'utf8'));
    expect(config.master_expiry_seconds).toBe(10);
    expect(config.workers.find((w) => w.name === 'w1')).toMatchObject({
      max_builds: 1,
      password_env: 'W1_PASSWORD',
    });
    expect(config.workers).toHaveLength(base.workers.length);
    expect(config.builders.map((b) => b.name)).toEqual([...base.builders.map((b: any) => b.name), 'locked']);
    expect(config.locks.map((l) => l.name)).toEqual(['solo']);
  });

  it('fails at once, naming the problem, on an override the master would refuse', () => {
    expect(() => masterYaml({ builders: [{ name: 'orphan', workers: ['nobody'] }] })).toThrow(/nobody/);
  });
});
