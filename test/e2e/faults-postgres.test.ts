// The fault suite's small forms of PostgreSQL going away (test/e2e/fault-scenarios.ts says what
// each checks), one after the other on one cluster with a PostgreSQL server of its own: stopped
// as a crash stops it (immediate), then cleanly (fast, PostgreSQL's SIGINT: see
// load/chaos/scenarios.ts on why not SIGTERM), each held until every master has noticed, then
// started again; then the small form of the 30 s outage: stopped as a crash stops it and held
// until every master has noticed and every build's command has printed ten more batches (or its
// last), so that each build's output waits in its master until PostgreSQL is back. The
// builds must ride all three out: every one SUCCESS once, no RETRY, no second execution, every
// line stored once, nothing left open, and the APIs answer 503 with Retry-After, never a 5xx of
// another kind.
import { describe, expect, it } from 'vitest';
import { BUILDS, expectWhole, faultSuite, runFaults } from './fault-scenarios.js';

faultSuite();

describe('PostgreSQL stopped (a crash, a clean stop, then away while the builds go on) and started again', () => {
  it('costs no build: each runs once, to SUCCESS, with every line, and nothing stays open', {
    timeout: 300_000,
  }, async () => {
    const r = await runFaults(['postgres-restart', 'postgres-term', 'postgres-30s'], {
      ownPostgres: true,
      // postgres-30s's own (load/chaos/scenarios.ts): a lease of 57 s, longer than ten batches of
      // a build's output and the heartbeat before them, with a loaded machine's crash recovery
      // on top.
      expirySeconds: 60,
    });
    expectWhole(r, 3 * BUILDS);
    expect(r.check.executions).toBe(3 * BUILDS);
    expect(r.check.results).toEqual({ '0': 3 * BUILDS });
    expect(r.timeline.map((t) => t.event)).toContain(`${BUILDS} commands went on while PostgreSQL was away`);
  });
});
