// What a values change rolls (issue 33 §3): API pods and masters reload a changed configuration
// themselves from the mounted ConfigMap, so the chart rolls them only for what a running
// process cannot take on. A pod rolls when its template changes, so each case compares the
// rendered pod templates of two releases.
import { beforeAll, describe, expect, it } from 'vitest';
import { CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, RELEASE, render, type Values } from './lib/helm.js';
import { named } from './lib/objects.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

const RELEASE_PREFIX = RELEASE;
const base = CI_VALUES[0]!;

function podTemplates(values: Values[]): { api: unknown; master: unknown } {
  const objects = render([base, ...values]);
  return {
    api: named(objects, 'Deployment', `${RELEASE_PREFIX}-api`).spec.template,
    master: named(objects, 'StatefulSet', `${RELEASE_PREFIX}-master`).spec.template,
  };
}

describe('a release upgraded with new values', () => {
  it('rolls neither API pods nor masters for a change they reload (the title)', () => {
    const before = podTemplates([]);
    const after = podTemplates([{ config: { title: 'Renamed' } }]);
    expect(after.api).toEqual(before.api);
    expect(after.master).toEqual(before.master);
  });

  it('rolls the masters, not the API pods, for a key masters take only at start', () => {
    const before = podTemplates([]);
    const after = podTemplates([{ config: { log_compression: 'none' } }]);
    expect(after.api).toEqual(before.api);
    expect(after.master).not.toEqual(before.master);
  });
});
