// The fault suite's small forms of a master or a worker agent lost (test/e2e/fault-scenarios.ts
// says what each checks), one after the other on one cluster: a master killed (-9) and started
// again under the same name, a worker agent stopped with SIGTERM and left down, then another
// killed (-9) and left down. Each fault's builds end RETRY and run again once, never beside
// their first execution; the agents' commands die with them (no command left running), and
// nothing stays open.
import { describe, expect, it } from 'vitest';
import { BUILDS, expectRerun, expectWhole, faultSuite, runFaults } from './fault-scenarios.js';

faultSuite();

describe('a master restarted under the same name, then two worker agents lost', () => {
  it('has each lost build rerun once, never beside itself, with no command left behind', {
    timeout: 300_000,
  }, async () => {
    const r = await runFaults(['master-restart', 'worker-term', 'worker-kill']);
    expectWhole(r, 3 * BUILDS);
    for (const name of ['master-restart', 'worker-term', 'worker-kill']) expectRerun(r, name);
    // The killed agent had a command, and it did not outlive the agent.
    expect(r.extra.workerCommands).toBeGreaterThan(0);
    expect(r.extra.commandsGoneMs).not.toBeNull();
  });
});
