// The fault suite's small forms for an API (test/e2e/fault-scenarios.ts says what each
// checks): two APIs under GET load, one of them killed (-9) or stopped (SIGTERM) and left
// down. The builds must not notice, and every GET must be answered by the API left, as an
// ingress would send them, with no 5xx.
import { describe, expect, it } from 'vitest';
import { BUILDS, expectWhole, faultSuite, runFault } from './fault-scenarios.js';

faultSuite();

describe.each([
  ['api-kill', 'killed with SIGKILL'],
  ['api-term', 'stopped with SIGTERM'],
])('one of two APIs %s', (scenario, how) => {
  it(`${how} and left down: builds run on, once each, and the other API answers every GET`, {
    timeout: 300_000,
  }, async () => {
    const r = await runFault(scenario, 2);
    expectWhole(r);
    // No build was touched: every request ran once.
    expect(r.check.executions).toBe(BUILDS);
    expect(r.traffic.ok).toBeGreaterThan(0);
    expect(r.traffic.unserved).toBe(0);
    expect(r.traffic.client).toBe(0);
  });
});
