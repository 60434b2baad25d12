// A master whose start fails leaves nothing running (issue 29 §3): startMaster is a list of
// named parts (services/master/master.ts), and the start is made to fail right after each of
// them in turn (failAt). Each time, what the parts started must be gone: no timer of the
// master's code pending (heartbeat, lease check, claim renewal, polls, catch-up), no BullMQ
// connection (jobs and reporters), the worker port closed, and the master's row left inactive
// and no longer renewed. Before parts, a failure after the jobs had started stopped only the
// reporters: the heartbeat and the job workers ran on in a process that had reported failure.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import { sql } from '../../services/core/db/pool.js';
import { createLogger } from '../../services/core/telemetry/logger.js';
import type { MasterDeps } from '../../services/master/master.js';
import { listenForWorkers } from '../../services/master/workers/listen.js';
import { redisClients, TimerWatch } from '../helpers/leftovers.js';
import { waitFor } from '../helpers/wait.js';
import { Stage } from './in-process.js';

// Something for every part to start: a reporter (its queue and worker), a scheduler, a lock.
const CONFIG = `
log_compression: none
workers: [{ name: w1, password: p }]
locks: [{ name: l1, type: master }]
builders:
  - { name: b1, workers: [w1], steps: [{ type: shell, command: "echo ok" }] }
schedulers:
  - { type: periodic, name: hourly, period: 3600, builders: [b1] }
reporters:
  - { type: http, serverUrl: "http://127.0.0.1:9/status" }
`;

// The names BullMQ's connections carry (jobs/queues.ts, reporters/index.ts).
const BULLMQ_CLIENTS = 'flotilla-master-';

let stage: Stage;
beforeAll(async () => {
  stage = await Stage.open();
}, 60_000);
afterAll(() => stage?.close());

/** Real worker listeners on a free port, so that a listener left open can be seen. */
function realListeners(name: string, ports: number[]): MasterDeps['listenForWorkers'] {
  return async (events) => {
    const l = await listenForWorkers({
      config: parseMasterConfig(CONFIG),
      host: '127.0.0.1',
      workerPort: 0,
      masterName: name,
      log: createLogger('listeners', 'silent'),
      events,
      env: {},
    });
    ports.push(l.ports.flotilla);
    return l;
  };
}

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });

async function masterRow(name: string): Promise<{ active: number; last_active: number } | undefined> {
  const rows = (await stage.db.pool.query(
    sql`SELECT active, last_active FROM masters WHERE name = ${name}`,
  )) as { active: number; last_active: number }[];
  return rows[0];
}

describe('a master whose start fails', () => {
  let partNames: string[] = [];

  it('starts its parts in order and stops them in reverse', async () => {
    const watch = new TimerWatch().start();
    try {
      const ports: number[] = [];
      const m = await stage.master('whole', CONFIG, { listenForWorkers: realListeners('whole', ports) });
      partNames = m.master
        .shutdownSteps()
        .map((s) => s.name)
        .reverse();
      expect(partNames).toEqual([
        'membership',
        'jobs',
        'reporters',
        'claim renewal',
        'runner',
        'worker listeners',
        'cluster events',
        'schedulers',
        'old build cancellers',
        'claiming',
        'metrics',
      ]);
      // What the checks below look for is there while it runs (else they would prove nothing).
      expect(watch.pending().some((w) => w.startsWith('services/master/membership.ts'))).toBe(true);
      expect(await redisClients(stage.redis.url, BULLMQ_CLIENTS)).toContain(
        'flotilla-master-report-http-worker',
      );
      expect(await refused(ports[0]!)).toBe(false);
      await m.stop();
      await waitFor('the stopped master’s timers to be gone', () => watch.pending().length === 0, {
        timeoutMs: 10_000,
      }).catch(() => {});
      expect(watch.pending()).toEqual([]);
    } finally {
      watch.stop();
    }
  });

  it('fails at each part in turn and leaves nothing of itself running', async () => {
    expect(partNames.length).toBeGreaterThan(0);
    for (const [i, part] of partNames.entries()) {
      const name = `fails-at-${i}`;
      const ports: number[] = [];
      const watch = new TimerWatch().start();
      try {
        await expect(
          stage.master(name, CONFIG, { failAt: part, listenForWorkers: realListeners(name, ports) }),
          part,
        ).rejects.toThrow(`${part} did not start: failAt: ${part}`);
        // Timers that fire once go by themselves; what is left after that was never cleared.
        await waitFor(
          `the timers of a master that failed at ${part} to be gone`,
          () => !watch.pending().length,
          {
            timeoutMs: 10_000,
          },
        ).catch(() => {});
        expect(watch.pending(), part).toEqual([]);
        expect(await redisClients(stage.redis.url, BULLMQ_CLIENTS), part).toEqual([]);
        for (const port of ports) expect(await refused(port), `${part}: worker port ${port}`).toBe(true);
        // Membership started first: its row was written, and left inactive, not renewed.
        const row = await masterRow(name);
        expect(row?.active, part).toBe(0);
        expect(await masterRow(name), part).toEqual(row);
      } finally {
        watch.stop();
      }
    }
  }, 120_000);
});
