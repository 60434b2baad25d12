// The fault suite's small form of Redis coming back empty, then a master killed
// (test/e2e/fault-scenarios.ts says what it checks). A file of its own, beside
// faults-master-freeze.test.ts, so that the two clusters run in parallel.
import { describe, expect, it } from 'vitest';
import { BUILDS, expectWhole, faultSuite, runFault } from './fault-scenarios.js';

faultSuite();

describe('Redis back empty, then a master killed', () => {
  it('still expires the dead master, and its build runs again once', { timeout: 300_000 }, async () => {
    const r = await runFault('redis-empty-master-kill');
    expectWhole(r);
    // The killed master's build ended RETRY on expiry and its request ran again.
    expect(r.check.results['5']).toBeGreaterThanOrEqual(1);
    expect(r.check.executions).toBeGreaterThan(BUILDS);
  });
});
