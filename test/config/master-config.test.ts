import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  loadMasterConfig,
  parseMasterConfig,
  workerPassword,
} from '../../services/core/config/master-config.js';
import { problems } from './problems.js';

describe('master configuration', () => {
  it('accepts the example configurations', () => {
    const example = loadMasterConfig('deploy/example/master.yaml');
    expect(example.builders.map((b) => b.name)).toContain('hello');
    const oracle = loadMasterConfig('test/conformance/oracle-master.yaml');
    expect(oracle.force_schedulers).toHaveLength(5);
  });

  it('fills in defaults', () => {
    const cfg = parseMasterConfig(`
workers: [{ name: w1, password: p }]
builders: [{ name: b1, workers: [w1], steps: [{ type: shell, command: make }] }]`);
    expect(cfg.workers[0]!.max_builds).toBe(1);
    expect(cfg.builders[0]!.steps[0]).toMatchObject({
      haltOnFailure: false,
      flunkOnFailure: true,
      timeout: 1200,
    });
    expect(cfg.log_compression).toBe('gzip');
    expect(cfg.master_expiry_seconds).toBe(600);
    expect(cfg.artifacts).toEqual({ default_maxsize: 256 * 1024 * 1024, build_quota: 1024 * 1024 * 1024 });
  });

  it('takes upload limits in whole bytes, each overridable', () => {
    expect(parseMasterConfig('artifacts: { build_quota: 2048 }').artifacts).toEqual({
      default_maxsize: 256 * 1024 * 1024,
      build_quota: 2048,
    });
    expect(problems('artifacts: { default_maxsize: 0, build_quota: 1.5, quota: 1 }')).toEqual([
      'artifacts.default_maxsize: Number must be greater than 0',
      'artifacts.build_quota: expected integer, got float',
      'artifacts: unknown key "quota"',
    ]);
  });

  it('keeps everything without a retention section, and names a bad horizon', () => {
    expect(parseMasterConfig('title: t').retention).toEqual({
      builders: {},
      tags: {},
      period_seconds: 3600,
      batch_size: 1000,
      max_run_seconds: 300,
    });
    expect(
      parseMasterConfig('retention: { logHorizon: 30d, builders: { b1: { max_builds: 50 } } }').retention,
    ).toMatchObject({ logHorizon: '30d', builders: { b1: { max_builds: 50 } } });
    expect(
      problems('retention: { logHorizon: 30 days, tags: { t: { build_horizon: 0 } }, horizon: 1 }'),
    ).toEqual([
      'retention.logHorizon: expected seconds, a number with a unit (s, m, h, d, w), or "forever"',
      'retention.tags.t.build_horizon: Number must be greater than 0',
      'retention: unknown key "horizon"',
    ]);
  });

  it('names the bad key and what was expected', () => {
    expect(problems('builders: [{ name: b1, workers: w1 }]')).toContain(
      'builders[0].workers: expected array, got string',
    );
    expect(problems('workers: [{ name: w1, password: p, max_builds: "two" }]')).toContain(
      'workers[0].max_builds: expected number, got string',
    );
    expect(problems('builders: [{ name: b1, wokers: [w1] }]')).toEqual(
      expect.arrayContaining([
        'builders[0]: unknown key "wokers"',
        'builders[0].workers: required, expected array',
      ]),
    );
    expect(problems('log_compression: lzma')).toEqual([
      'log_compression: expected one of none, gzip, zstd, got "lzma"',
    ]);
    expect(problems('builders: [{ name: "1st", workers: [w] }]').join()).toMatch(
      /builders\[0\]\.name: expected an identifier/,
    );
    expect(
      problems(`
workers: [{ name: w1, password: p }]
builders: [{ name: b1, workers: [w1], steps: [{ type: pwsh, command: x }] }]`).join(),
    ).toMatch(/builders\[0\]\.steps\[0\]\.type: expected type to be one of shell, set_property, trigger/);
    expect(problems('workers: [{ name: w1 }]').join()).toMatch(
      /exactly one of password, password_env, password_file/,
    );
  });

  it("refuses GitHub's team groups without API v4, as Buildbot's GitHubAuth does, naming the key", () => {
    const oauth2 = (keys: string) => `auth: { oauth2: { clientId: c, clientSecret_env: S, ${keys} } }`;
    expect(
      parseMasterConfig(oauth2('provider: github, apiVersion: 4, getTeamsMembership: true')).auth.oauth2,
    ).toMatchObject({ apiVersion: 4, getTeamsMembership: true });
    expect(problems(oauth2('provider: github, getTeamsMembership: true'))).toEqual([
      'auth.oauth2.getTeamsMembership: getTeamsMembership needs apiVersion: 4 (GitHub API v4, GraphQL)',
    ]);
    expect(
      problems(oauth2('provider: gitlab, instanceUri: "https://gl.example.org", apiVersion: 4')),
    ).toEqual(['auth.oauth2.apiVersion: apiVersion and getTeamsMembership are for GitHub only']);
    expect(problems(oauth2('provider: github, apiVersion: 5')).join()).toMatch(/^auth\.oauth2\.apiVersion: /);
  });

  it('checks that names refer to something', () => {
    expect(
      problems(`
workers: [{ name: w1, password: p }]
builders: [{ name: b1, workers: [w1, w9] }]
schedulers: [{ type: triggerable, name: t, builders: [b2] }]
force_schedulers: [{ name: f, builders: [b1] }, { name: f, builders: [b1] }]`),
    ).toEqual([
      'force_schedulers[1].name: duplicate name "f"',
      'builders[0].workers[1]: no worker named "w9"',
      'schedulers[0].builders[0]: no builder named "b2"',
    ]);
  });

  it('reports YAML syntax errors', () => {
    expect(() => parseMasterConfig('builders: [unclosed')).toThrow(/not valid YAML/);
  });

  it('reads worker passwords from where the configuration says', () => {
    const cfg = parseMasterConfig(`
workers:
  - { name: a, password: lit }
  - { name: b, password_env: B_PASS }
  - { name: c, password_file: package.json }`);
    expect(workerPassword(cfg.workers[0]!)).toBe('lit');
    expect(workerPassword(cfg.workers[1]!, { B_PASS: 'from-env' })).toBe('from-env');
    expect(() => workerPassword(cfg.workers[1]!, {})).toThrow(/B_PASS is not set/);
    expect(workerPassword(cfg.workers[2]!)).toBe(readFileSync('package.json', 'utf8').trim());
  });

  it('refuses a plain password for a user', () => {
    expect(problems('auth: { users: [{ username: admin, password_hash: hunter2 }] }').join()).toMatch(
      /auth.users\[0\].password_hash: expected an scrypt hash/,
    );
  });
});
