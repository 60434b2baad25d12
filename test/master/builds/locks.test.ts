// Locks on real builds across two in-process masters (one database, one Redis): a master lock
// of maxCount 2 under 10 concurrent builds never has a third holder, and every build gets its
// turn; a worker lock counts per worker (maxCountForWorker); a step lock is held only while
// its step runs; a build stopped while it waits gives up its place.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockHolders } from '../../../services/core/data/index.js';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { waitFor } from '../../helpers/wait.js';
import { type InProcessMaster, type Script, ScriptedWorker, Stage, tinyShell } from '../in-process.js';
import { finishedBuild, logs, request, steps } from './lib.js';

// A worker runs one build of a builder at a time (as Buildbot's), so concurrent builds come
// from several builders of the same shape: limited-0..4 share the master lock, on-a-0..2 and
// on-b-0..1 the worker lock.
const limited = (i: number) => `
  - name: limited-${i}
    workers: [a1, b1]
    locks: [db]
    steps:
      - { type: shell, name: work, command: gate }`;
const onA = (i: number) => `
  - name: on-a-${i}
    workers: [a1]
    steps:
      - { type: shell, name: free, command: "echo free" }
      - { type: shell, name: locked, command: gate, locks: [box] }`;
const onB = (i: number) => `
  - name: on-b-${i}
    workers: [b1]
    steps:
      - { type: shell, name: locked, command: gate, locks: [{ lock: box, mode: exclusive }] }`;

const CONFIG = `
log_compression: none
locks:
  - { name: db, type: master, maxCount: 2 }
  - { name: box, type: worker, maxCount: 1, maxCountForWorker: { a1: 2 } }
workers:
  - { name: a1, password: x, max_builds: 6 }
  - { name: b1, password: x, max_builds: 6 }
builders:${[0, 1, 2, 3, 4].map(limited).join('')}${[0, 1, 2].map(onA).join('')}${[0, 1].map(onB).join('')}
`;

/** Commands named `gate` run until the test lets one go; it counts how many run at once. */
class Gate {
  private readonly open: { worker: string; go: () => void }[] = [];
  max = 0;

  get running(): number {
    return this.open.length;
  }

  on(worker: string): number {
    return this.open.filter((g) => g.worker === worker).length;
  }

  script(worker: string): Script {
    return async (cmd) => {
      if (cmd.text !== 'gate') return tinyShell(cmd);
      await new Promise<void>((resolve) => {
        const entry = { worker, go: resolve };
        this.open.push(entry);
        this.max = Math.max(this.max, this.open.length);
        cmd.signal.addEventListener('abort', () => this.release(entry), { once: true });
      });
      return {};
    };
  }

  private release(entry: { go: () => void }): void {
    const i = this.open.indexOf(entry as (typeof this.open)[number]);
    if (i >= 0) this.open.splice(i, 1);
    entry.go();
  }

  /** Let the oldest running command end. */
  next(): void {
    const first = this.open[0];
    if (first) this.release(first);
  }
}

let stage: Stage;
let m1: InProcessMaster;
let m2: InProcessMaster;
const gate = new Gate();
beforeAll(async () => {
  stage = await Stage.open();
  m1 = await stage.master('locks-1', CONFIG);
  m2 = await stage.master('locks-2', CONFIG);
  m1.workers.connect(new ScriptedWorker('a1', gate.script('a1')));
  m2.workers.connect(new ScriptedWorker('b1', gate.script('b1')));
}, 60_000);
afterAll(async () => {
  await Promise.all([m1?.stop(), m2?.stop()]);
  await stage?.close();
});

const waiters = async () =>
  (await stage.db.pool.query(sql`SELECT count(*)::int AS n FROM flotilla.lock_waiters`))[0].n as number;

describe('a master lock of maxCount 2', () => {
  it('under 10 concurrent builds on two masters, never has 3 holders, and each build gets its turn', async () => {
    const brids = [];
    for (let i = 0; i < 10; i++) brids.push((await request(stage, `limited-${i % 5}`)).brid);
    // All ten are claimed (each master's worker takes five, one of each builder): two hold,
    // eight wait.
    await waitFor('two holders and eight waiters', async () => gate.running === 2 && (await waiters()) === 8);
    const mastersSeen = new Set<number>();
    // waitFor takes a failed expectation for "not yet": the largest count seen is checked after.
    let mostHolders = 0;
    for (let left = 10; left > 0; left--) {
      // A build that ended lets go of the lock just after its command: wait for both to agree.
      const want = Math.min(2, left);
      let holders: Awaited<ReturnType<typeof lockHolders>> = [];
      await waitFor(`${want} builds to hold the lock`, async () => {
        holders = await lockHolders(stage.db.pool, 'db');
        mostHolders = Math.max(mostHolders, holders.length);
        return gate.running === want && holders.length === want;
      });
      for (const x of holders) mastersSeen.add(x.masterid);
      gate.next();
    }
    for (const brid of brids) expect((await finishedBuild(stage, brid)).results).toBe(Results.SUCCESS);
    expect(gate.max).toBe(2);
    expect(mostHolders).toBe(2);
    expect(mastersSeen).toEqual(new Set([m1.master.masterid, m2.master.masterid]));
    // The last build lets go of the lock once it has finished.
    await waitFor('the lock to be free', async () => (await lockHolders(stage.db.pool, 'db')).length === 0);
    expect(await waiters()).toBe(0);
  });

  it("a waiting build shows it in worker_preparation's place, and a stop there cancels it", async () => {
    const requests = [
      await request(stage, 'limited-0'),
      await request(stage, 'limited-1'),
      await request(stage, 'limited-2'),
    ];
    const brids = requests.map((r) => r.brid);
    await waitFor('two running, one waiting', async () => gate.running === 2 && (await waiters()) === 1);
    // Two masters claim the three at once, so any of them may be the one left waiting.
    let waiting: { id: number; buildrequestid: number } | undefined;
    await waitFor('the waiting build to say so', async () => {
      [waiting] = await stage.db.pool.query(sql`
        SELECT id, buildrequestid FROM builds
        WHERE buildrequestid = ANY(${brids}::int[]) AND state_string = 'acquiring locks'`);
      return waiting !== undefined;
    });
    const stopped =
      m1.master.runner.stop(waiting!.id, 'no patience') || m2.master.runner.stop(waiting!.id, 'no patience');
    expect(stopped).toBe(true);
    const build = await finishedBuild(stage, waiting!.buildrequestid);
    expect(build.results).toBe(Results.CANCELLED);
    expect((await steps(stage, build.id)).map((s) => [s.name, s.results, s.state_string])).toEqual([
      ['worker_preparation', Results.CANCELLED, 'cancelled while waiting for locks'],
    ]);
    expect(await waiters()).toBe(0);
    gate.next();
    gate.next();
    for (const brid of brids.filter((b) => b !== waiting!.buildrequestid)) {
      expect((await finishedBuild(stage, brid)).results).toBe(0);
    }
  });
});

describe('a worker lock', () => {
  it('counts per worker (maxCountForWorker), and a step holds it only while it runs', async () => {
    const onA = [];
    const onB = [];
    for (let i = 0; i < 3; i++) onA.push((await request(stage, `on-a-${i}`)).brid);
    for (let i = 0; i < 2; i++) onB.push((await request(stage, `on-b-${i}`)).brid);
    await waitFor(
      'two steps on a1 and one on b1',
      async () => gate.on('a1') === 2 && gate.on('b1') === 1 && (await waiters()) === 2,
    );
    const holders = await lockHolders(stage.db.pool, 'box');
    expect(holders.map((x) => [x.worker_name, x.mode]).sort()).toEqual([
      ['a1', 'counting'],
      ['a1', 'counting'],
      ['b1', 'exclusive'],
    ]);
    for (let i = 0; i < 5; i++) {
      await waitFor('a step to run', () => gate.running > 0);
      gate.next();
    }
    for (const brid of [...onA, ...onB]) {
      const build = await finishedBuild(stage, brid);
      expect(build.results).toBe(Results.SUCCESS);
    }
    const build = await finishedBuild(stage, onA[0]!);
    expect((await logs(stage, build.id, 'free')).stdio).toBe('ofree');
    expect(gate.max).toBe(3);
  });
});
