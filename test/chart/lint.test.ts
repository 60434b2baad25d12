// helm lint --strict: the chart is well-formed with every ci/ value set, and values the
// schema does not allow fail the lint. (Lint only logs a template's `fail`; the chart's
// own rules are checked with helm template in required-values.test.ts.)
import { basename } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, lint } from './lib/helm.js';

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
