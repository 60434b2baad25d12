// The fault suite's small forms of Redis going away (test/e2e/fault-scenarios.ts says what each
// checks), one after the other on one cluster: killed (-9) and started again with its data,
// stopped cleanly (SIGTERM) and started again, killed and started again empty, each held until
// every master has noticed; then the small form of the 30 s outage: killed and held until every
// master has noticed and every build has finished, its log stored and its request complete,
// then started again with its data. Redis is a cache of liveness: no build may notice, so every
// one runs once, to SUCCESS, with every line, and nothing stays open
// (faults-redis-empty.test.ts adds a master's death after Redis came back empty).
import { describe, expect, it } from 'vitest';
import { BUILDS, expectWhole, faultSuite, runFaults } from './fault-scenarios.js';

faultSuite();

describe('Redis killed, stopped, back empty, and away until the builds are done', () => {
  it('costs no build: each runs once, to SUCCESS, with every line, and nothing stays open', {
    timeout: 300_000,
  }, async () => {
    const r = await runFaults(['redis-restart', 'redis-term', 'redis-empty', 'redis-30s']);
    expectWhole(r, 4 * BUILDS);
    expect(r.check.executions).toBe(4 * BUILDS);
    expect(r.check.results).toEqual({ '0': 4 * BUILDS });
  });
});
