// The fault suite's small forms of PostgreSQL going away (test/e2e/fault-scenarios.ts says what
// each checks), one after the other on one cluster with a PostgreSQL server of its own: stopped
// as a crash stops it (immediate), then cleanly (fast, PostgreSQL's SIGINT: see
// load/chaos/scenarios.ts on why not SIGTERM), each held until every master has noticed, then
// started again. The builds must ride both out with their output held back: every one SUCCESS
// once, no RETRY, no second execution, every line stored once, nothing left open, and the APIs
// answer 503 with Retry-After, never a 5xx of another kind.
import { describe, expect, it } from 'vitest';
import { BUILDS, expectWhole, faultSuite, runFaults, SHORT_JOB } from './fault-scenarios.js';

faultSuite();

describe('PostgreSQL stopped (a crash, then a clean stop) and started again', () => {
  it('costs no build: each runs once, to SUCCESS, with every line, and nothing stays open', {
    timeout: 300_000,
  }, async () => {
    const r = await runFaults(['postgres-restart', 'postgres-term'], {
      ownPostgres: true,
      job: SHORT_JOB,
      // A lease of 37 s: a crash recovery on a loaded machine must not end the builds.
      expirySeconds: 40,
    });
    expectWhole(r, 2 * BUILDS);
    expect(r.check.executions).toBe(2 * BUILDS);
    expect(r.check.results).toEqual({ '0': 2 * BUILDS });
  });
});
