// helm lint --strict: the chart is well-formed with every ci/ value set, and values the
// schema does not allow fail the lint. (Lint only logs a template's `fail`; the chart's
// own rules are checked with helm template in required-values.test.ts.)
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CHART, CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, lint, ROOT, render } from './lib/helm.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

describe('helm lint --strict', () => {
  it.each(CI_VALUES.map((f) => [basename(f), f]))('passes with %s', (_name, file) => {
    const r = lint([file]);
    expect(r.stderr + r.stdout).toContain('0 chart(s) failed');
    expect(r.status).toBe(0);
  });

  it('fails on a value the schema does not know', () => {
    const r = lint([CI_VALUES[0]!, { api: { replica: 3 } }]);
    expect(r.status).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/additional propert(y|ies).*replica|replica.*not allowed/i);
  });
});

// chart-testing (`ct lint`) runs yamllint with its own rules on the chart's YAML, checks
// Chart.yaml against its schema, and wants the version bumped with every change;
// charts/lintconf.yaml carries the same yamllint rules.
describe('chart-testing lint rules', () => {
  const yamllint = (...files: string[]) =>
    spawnSync('yamllint', ['-f', 'parsable', '-c', join(ROOT, 'charts/lintconf.yaml'), ...files], {
      encoding: 'utf8',
    });

  it('yamllint passes on Chart.yaml, values.yaml and every ci/ value set', () => {
    const r = yamllint(join(CHART, 'Chart.yaml'), join(CHART, 'values.yaml'), join(CHART, 'ci'));
    expect(r.error).toBeUndefined();
    expect(r.stdout).toBe('');
    expect(r.status).toBe(0);
  });

  it('yamllint refuses spaces inside braces, as ct lint does', () => {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-yamllint-'));
    writeFileSync(join(dir, 'values.yaml'), 'resources:\n  requests: { cpu: 1 }\n');
    const r = yamllint(join(dir, 'values.yaml'));
    expect(r.status).not.toBe(0);
    expect(r.stdout).toContain('too many spaces inside braces');
  });

  it('Chart.yaml has what ct wants: a SemVer version, a description, maintainers with account names', () => {
    const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8'));
    expect(chart.apiVersion).toBe('v2');
    expect(chart.name).toBe('flotilla');
    expect(chart.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(chart.description.length).toBeGreaterThan(10);
    expect(chart.maintainers.length).toBeGreaterThan(0);
    for (const m of chart.maintainers) {
      expect(m.name).toMatch(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/);
      expect(m.email ?? m.url).toBeTruthy();
    }
  });

  it('the last change to the chart bumped its version (ct lint --check-version-increment)', () => {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    const changedNow = git('status', '--porcelain', '--', 'charts/flotilla') !== '';
    const versionAt = (rev: string) => parse(git('show', `${rev}:charts/flotilla/Chart.yaml`)).version;
    const current = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')).version;
    if (changedNow) {
      // Work in progress: the working tree's version must differ from the last commit's.
      expect(current, 'charts/flotilla changed: bump version in Chart.yaml').not.toBe(versionAt('HEAD'));
      return;
    }
    const last = git('log', '-1', '--format=%H', '--', 'charts/flotilla');
    expect(last, 'no history of charts/flotilla: a shallow clone?').not.toBe('');
    const parent = git('rev-list', '--max-count=1', `${last}^`);
    expect(versionAt(last), `commit ${last} changed the chart without bumping its version`).not.toBe(
      versionAt(parent),
    );
  });

  it('has NOTES.txt and a `helm test` pod', () => {
    expect(existsSync(join(CHART, 'templates/NOTES.txt'))).toBe(true);
    for (const values of CI_VALUES) {
      const tests = render([values]).filter((o) => o.metadata.annotations?.['helm.sh/hook'] === 'test');
      expect(tests.map((o) => o.kind)).toEqual(['Pod']);
    }
  });
});
