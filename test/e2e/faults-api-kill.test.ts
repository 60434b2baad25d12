// The fault suite's small form of an API's kill -9 (test/e2e/fault-scenarios.ts says what it
// checks): two APIs under GET load, one of them killed with SIGKILL and left down. The builds must
// not notice, and every GET must be answered by the API left, as an ingress would send them, with
// no 5xx. A file of its own, beside faults-api-term.test.ts: each scenario starts its own cluster,
// so the two run in parallel (in one file they were the suite's longest, 138-164 s).
import { describe, it } from 'vitest';
import { expectApiFault, faultSuite } from './fault-scenarios.js';

faultSuite();

describe('one of two APIs killed with SIGKILL', () => {
  it(
    'and left down: builds run on, once each, and the other API answers every GET',
    { timeout: 300_000 },
    () => expectApiFault('api-kill'),
  );
});
