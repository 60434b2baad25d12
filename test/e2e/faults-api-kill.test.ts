// The fault suite's small forms of the baseline, an API's kill -9 and a master's
// (test/e2e/fault-scenarios.ts says what each checks), one after the other on one cluster of two
// APIs: first a round with no fault (the builds the faults are measured against: each runs
// once, to SUCCESS, with every line), then an API killed
// with SIGKILL and left down, which no build may notice, every GET answered by the API left (as
// an ingress would send them) with no 5xx; then the master with more builds killed and left
// down: the other master expires it, and each of its builds ends RETRY and runs again there
// once, never beside its first execution, whose command died with its link to the master.
// A file of its own, beside faults-api-term.test.ts: each starts its own cluster, so the two
// run in parallel.
import { describe, it } from 'vitest';
import {
  BUILDS,
  expectGetsServed,
  expectRerun,
  expectUntouched,
  expectWhole,
  faultSuite,
  runFaults,
} from './fault-scenarios.js';

faultSuite();

describe('no fault, then an API, then a master, killed with SIGKILL and left down', () => {
  it("runs every build once, costs no build the API's, reruns the master's once each, and every GET is answered", {
    timeout: 300_000,
  }, async () => {
    const r = await runFaults(['baseline', 'api-kill', 'master-kill'], { apis: 2 });
    expectWhole(r, 3 * BUILDS);
    expectUntouched(r, 'baseline');
    expectUntouched(r, 'api-kill');
    expectRerun(r, 'master-kill');
    expectGetsServed(r);
  });
});
