// The fault suite's small forms of a master frozen past its expiry (test/e2e/fault-scenarios.ts
// says what each checks), one after the other on one cluster with a PostgreSQL server of its own:
// - frozen (SIGSTOP) at the worst moment: inside a transaction of its own that wrote, whose row
//   locks (its masters row, its build's log) the master that expires it needs. Frozen at a
//   random moment instead, it stalled now and then (the rerun never came: the other master's
//   expiry waited on the frozen one's locks); frozen so, it stalled every time until the server
//   was told to end a master's transaction idle past its lease (services/master/service.ts);
// - two faults at once: frozen, and meanwhile PostgreSQL stopped as a crash stops it and
//   started again; the master left must ride out the outage and then expire the frozen one.
// Continued, each frozen master must find itself expired and write nothing. A file of its own,
// beside faults-redis-empty.test.ts, so that the clusters run in parallel.
import { describe, it } from 'vitest';
import { BUILDS, expectRerun, expectWhole, faultSuite, runFaults } from './fault-scenarios.js';

faultSuite();

describe('a master frozen (SIGSTOP) past its expiry, then continued', () => {
  it('inside a write transaction, then while PostgreSQL restarts: its builds rerun elsewhere once, never beside their commands, and nothing stays open', {
    timeout: 300_000,
  }, async () => {
    const r = await runFaults(['master-freeze-tx', 'master-freeze-postgres-restart'], { ownPostgres: true });
    expectWhole(r, 2 * BUILDS);
    // Each frozen master's builds ended RETRY (the other master's housekeeping), and their
    // requests ran again.
    expectRerun(r, 'master-freeze-tx');
    expectRerun(r, 'master-freeze-postgres-restart');
  });
});
