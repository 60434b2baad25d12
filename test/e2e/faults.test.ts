// The fault suite's small forms for a master (test/e2e/fault-scenarios.ts says what each
// checks): frozen past its expiry, and killed after Redis came back empty.
import { describe, expect, it } from 'vitest';
import { BUILDS, expectWhole, faultSuite, runFault as run } from './fault-scenarios.js';

faultSuite();

describe('a master frozen (SIGSTOP) past its expiry, then continued', () => {
  it('has its build rerun elsewhere once, never beside its own command, and leaves nothing open', {
    timeout: 300_000,
  }, async () => {
    const r = await run('master-freeze');
    expectWhole(r);
    // The frozen master's build ended RETRY (the other master's housekeeping), and its request
    // ran again: more executions than requests, none of them overlapping.
    expect(r.check.results['5']).toBeGreaterThanOrEqual(1);
    expect(r.check.executions).toBeGreaterThan(BUILDS);
  });
});

describe('Redis back empty, then a master killed', () => {
  it('still expires the dead master, and its build runs again once', { timeout: 300_000 }, async () => {
    const r = await run('redis-empty-master-kill');
    expectWhole(r);
    expect(r.check.results['5']).toBeGreaterThanOrEqual(1);
    expect(r.check.executions).toBeGreaterThan(BUILDS);
  });
});
