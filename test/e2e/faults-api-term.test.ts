// The fault suite's small forms of an API's SIGTERM and a master's (test/e2e/fault-scenarios.ts
// says what each checks), one after the other on one cluster of two APIs: first an API stopped
// with SIGTERM and left down, which no build may notice, every GET answered by the API left (as
// an ingress would send them) with no 5xx; then the master with more builds stopped with SIGTERM
// (a 5 s drain, shorter than what is left of its builds) and left down: it hands its builds back
// RETRY, stopping their commands, and each runs again on the other master once, never beside
// its first execution. A file of its own, beside faults-api-kill.test.ts: each starts its own
// cluster, so the two run in parallel.
import { describe, it } from 'vitest';
import {
  BUILDS,
  expectGetsServed,
  expectRerun,
  expectUntouched,
  expectWhole,
  faultSuite,
  LONG_JOB,
  runFaults,
} from './fault-scenarios.js';

faultSuite();

describe('an API, then a master, stopped with SIGTERM and left down', () => {
  it("costs no build the API's, reruns the master's once each, and every GET is answered", {
    timeout: 300_000,
  }, async () => {
    const r = await runFaults(['api-term', 'master-term'], {
      apis: 2,
      // What the master-term scenario asks for (load/chaos/scenarios.ts): a drain the builds outlast.
      masterEnv: { MASTER_DRAIN_SECONDS: '5' },
      // Builds that outlast the drain by far (fault-scenarios.ts: LONG_JOB).
      job: LONG_JOB,
    });
    expectWhole(r, 2 * BUILDS);
    expectUntouched(r, 'api-term');
    expectRerun(r, 'master-term');
    expectGetsServed(r);
  });
});
