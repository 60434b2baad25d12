// Issue 20 §3, small form of load/chaos's redis-failover scenario: a cluster of real
// processes (an API, a master, three workers) on Redis Sentinel (Debian's redis-server as
// primary and replica, three redis-sentinels; test/helpers/sentinel.ts), three builds
// printing numbered lines and three /ws clients following builds and logs; when every build
// is a quarter through, the primary is killed with SIGKILL and the sentinels promote the
// replica. Counted afterwards: every build SUCCESS with every line it printed in PostgreSQL,
// once and in order; nothing left open; no 5xx under a light GET load; every /ws client
// either received the events published after the failover and every build's `finished`, or
// was told to reload; every finished log's compress-log job recorded as run once. The time
// to recover is the runner's to measure (load/results/sentinel-failover.md), not this test's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScenario, SCENARIOS } from '../../load/chaos/scenarios.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { expectWhole } from './fault-scenarios.js';

const BUILDS = 3;
const WS_CLIENTS = 3;
// 100 batches of 10 lines, 0.2 s apart: about 20 s a build, so the failover (a quarter in,
// seconds long) comes while every build is printing.
const JOB = { lines: 1000, batch: 10, pause: 0.2 };

let dir: string;
let db: TestDatabase | undefined;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'flotilla-redis-failover-'));
});
afterAll(async () => {
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the Redis primary killed under Sentinel during builds', () => {
  it('loses no line, finishes every build, keeps /ws clients whole and runs each job once', {
    timeout: 300_000,
  }, async () => {
    const sc = SCENARIOS.find((s) => s.name === 'redis-failover')!;
    db = await createDatabase('migrated');
    const seen: string[] = [];
    const r = await runScenario(sc, {
      dir: join(dir, sc.name),
      databaseUrl: db.url,
      builds: BUILDS,
      job: JOB,
      expirySeconds: 30,
      load: 5,
      apis: 1,
      masters: 1,
      workers: BUILDS,
      maxBuilds: 1,
      wsClients: WS_CLIENTS,
      settleSeconds: 120,
      fixed: false,
      log: (line) => seen.push(line),
    }).catch((err: Error) => {
      err.message += `\n${seen.join('\n')}`;
      throw err;
    });
    const c = r.check;
    const why = JSON.stringify({ timeline: r.timeline, results: c.results, ws: r.ws, jobs: r.jobs });
    expect(r.extra.promotedSeconds, why).toBeDefined();
    expectWhole(r, BUILDS);
    expect(c.executions, why).toBe(BUILDS);

    expect(r.ws?.clients, why).toHaveLength(WS_CLIENTS);
    expect(r.ws?.lost, why).toBe(0);
    expect(r.ws!.resumed + r.ws!.reloaded, why).toBe(WS_CLIENTS);

    // One recorded run per finished log, however often BullMQ delivered its job.
    expect(r.jobs, why).not.toBeNull();
    expect(r.jobs!.logs, why).toBeGreaterThanOrEqual(BUILDS);
    expect(r.jobs!.runs, why).toBe(r.jobs!.logs);
  });
});
