// The fault suite's small forms of the baseline and of Redis coming back empty, then a master
// killed (test/e2e/fault-scenarios.ts says what each checks), one after the other on one
// cluster: first a round with no fault (the builds the faults are measured against: each runs
// once, to SUCCESS, with every line), then Redis killed and started again empty, and once the
// masters are ready again, the master with more builds killed and left down: the expire-masters
// schedule, gone with Redis's data, must be back, so that the dead master is expired and its
// builds run again. A file of its own, beside faults-master-freeze.test.ts, so that the two
// clusters run in parallel.
import { describe, it } from 'vitest';
import {
  BUILDS,
  expectRerun,
  expectUntouched,
  expectWhole,
  faultSuite,
  runFaults,
} from './fault-scenarios.js';

faultSuite();

describe('no fault, then Redis back empty and a master killed', () => {
  it('runs every build once, then still expires the dead master and runs its builds again once', {
    timeout: 300_000,
  }, async () => {
    const r = await runFaults(['baseline', 'redis-empty-master-kill']);
    expectWhole(r, 2 * BUILDS);
    expectUntouched(r, 'baseline');
    // The killed master's builds ended RETRY on expiry and their requests ran again.
    expectRerun(r, 'redis-empty-master-kill');
  });
});
