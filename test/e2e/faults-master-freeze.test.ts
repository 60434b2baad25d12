// The fault suite's small form of a master frozen past its expiry (test/e2e/fault-scenarios.ts
// says what it checks), frozen at the worst moment: inside a transaction of its own that wrote,
// whose row locks (its masters row, its build's log) the master that expires it needs. Frozen
// at a random moment instead, it stalled now and then (the rerun never came: the other master's
// expiry waited on the frozen one's locks); frozen so, it stalled every time until the server
// was told to end a master's transaction idle past its lease (services/master/service.ts).
// A file of its own, beside faults-redis-empty.test.ts: each scenario starts its own cluster
// on its own database, so the two run in parallel rather than one after the other.
import { describe, expect, it } from 'vitest';
import { BUILDS, expectWhole, faultSuite, runFault } from './fault-scenarios.js';

faultSuite();

describe('a master frozen (SIGSTOP) inside a write transaction, past its expiry, then continued', () => {
  it('has its build rerun elsewhere once, never beside its own command, and leaves nothing open', {
    timeout: 300_000,
  }, async () => {
    const r = await runFault('master-freeze-tx');
    expectWhole(r);
    // The frozen master's build ended RETRY (the other master's housekeeping), and its request
    // ran again: more executions than requests, none of them overlapping.
    expect(r.check.results['5']).toBeGreaterThanOrEqual(1);
    expect(r.check.executions).toBeGreaterThan(BUILDS);
  });
});
