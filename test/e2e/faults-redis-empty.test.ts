// The fault suite's small form of Redis coming back empty, then a master killed
// (test/e2e/fault-scenarios.ts says what each checks): Redis killed and started again empty,
// and once the masters are ready again, the master with more builds killed and left down: the
// expire-masters schedule, gone with Redis's data, must be back, so that the dead master is
// expired and its builds run again. Its builds are LONG_JOB's, so that they still run when the
// master is killed. The baseline round (no fault) runs in faults-api-kill.test.ts, on builds of
// the usual length. A file of its own, beside faults-master-freeze.test.ts, so that the two
// clusters run in parallel.
import { describe, it } from 'vitest';
import { expectRerun, expectWhole, faultSuite, LONG_JOB, runFaults } from './fault-scenarios.js';

faultSuite();

describe('Redis back empty and a master killed', () => {
  it('still expires the dead master and runs its builds again once', {
    timeout: 300_000,
  }, async () => {
    const r = await runFaults(['redis-empty-master-kill'], { job: LONG_JOB });
    expectWhole(r);
    // The killed master's builds ended RETRY on expiry and their requests ran again.
    expectRerun(r, 'redis-empty-master-kill');
  });
});
