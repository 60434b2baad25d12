// The distributor in-process, against a real database, with scripted workers: requests are
// claimed highest priority first, then oldest; collapse_requests folds pending requests of
// the same source stamps into one build; and requests added all at once, raced for by
// several masters, are each claimed and built exactly once, no worker ever running more
// than its slots. (The same race across real processes: test/e2e/masters.test.ts; at
// 1,000 requests: load/claims.) And a pass woken by a request's event looks at that request's
// builder alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addBuildset, findBuilderId, transact } from '../../services/core/data/index.js';
import { sql } from '../../services/core/db/pool.js';
import { Results } from '../../services/core/results.js';
import { eventually } from '../helpers/wait.js';
import { ScriptedWorker, Stage } from './in-process.js';

// The race's builders: a worker runs one build of a builder at a time (as Buildbot does), so
// three builders are what lets each worker fill its three slots.
const BUSY = ['busy-a', 'busy-b', 'busy-c'];

const CONFIG = `
log_compression: none
workers:
  - { name: solo, password: x, max_builds: 1 }
  - { name: pair, password: x, max_builds: 2 }
${Array.from({ length: 8 }, (_, i) => `  - { name: q${i}, password: x, max_builds: 3 }`).join('\n')}
builders:
  - { name: ordered, workers: [solo], steps: [{ type: shell, command: "echo ok" }] }
  - { name: folded, workers: [solo], collapse_requests: true, steps: [{ type: shell, command: "echo ok" }] }
  - { name: twice, workers: [pair], steps: [{ type: shell, command: "echo twice" }] }
  - { name: other, workers: [pair], steps: [{ type: shell, command: "echo other" }] }
${BUSY.map(
  (name) => `  - name: ${name}
    workers: [${Array.from({ length: 8 }, (_, i) => `q${i}`).join(', ')}]
    steps: [{ type: shell, command: "echo one; echo two" }]`,
).join('\n')}
`;

let stage: Stage;
beforeAll(async () => {
  stage = await Stage.open();
});
afterAll(() => stage?.close());

interface Wanted {
  branch?: string;
  revision?: string;
  priority?: number;
}

/** Add one build set per entry, each with one request for `builder`, all in one transaction. */
async function requests(builder: string, wanted: Wanted[]): Promise<number[]> {
  return transact(stage.ctx, async (tx) => {
    // Created by name if no master has registered it yet (a master finds it by name).
    const builderid = (await findBuilderId(tx, builder))!;
    const brids: number[] = [];
    for (const [i, w] of wanted.entries()) {
      const added = await addBuildset(tx, {
        scheduler: 'test',
        sourcestamps: [
          {
            codebase: '',
            repository: 'r',
            branch: w.branch ?? 'main',
            revision: w.revision ?? `r${i}`,
            project: '',
          },
        ],
        reason: `request ${i}`,
        builderids: [builderid],
        priority: w.priority ?? 0,
      });
      brids.push(added.brids[builderid]!);
    }
    return brids;
  });
}

async function completed(brids: number[], timeoutMs = 60_000) {
  return eventually(
    () =>
      stage.db.pool.query(sql`
        SELECT id, results FROM buildrequests WHERE id = ANY(${brids}::int[]) AND complete = 1 ORDER BY id`),
    (rows) => rows.length === brids.length,
    { timeoutMs },
  );
}

/** The requests in the order their builds started. */
async function buildOrder(brids: number[]): Promise<number[]> {
  const rows = await stage.db.pool.query(sql`
    SELECT buildrequestid FROM builds WHERE buildrequestid = ANY(${brids}::int[]) ORDER BY id`);
  return rows.map((r) => r.buildrequestid);
}

describe('one master', () => {
  it('claims the highest priority first, then the oldest', async () => {
    // Queued before any worker is there to take them.
    const [low1, high1, low2, high2] = await requests('ordered', [
      { priority: 0 },
      { priority: 5 },
      { priority: 0 },
      { priority: 5 },
    ]);
    const m = await stage.master('order', CONFIG);
    try {
      m.workers.connect(new ScriptedWorker('solo'));
      await completed([low1!, high1!, low2!, high2!]);
      expect(await buildOrder([low1!, high1!, low2!, high2!])).toEqual([high1, high2, low1, low2]);
    } finally {
      await m.stop();
    }
  });

  it('without collapse_requests (the default, unlike Buildbot: docs/compatibility.md), pending requests of one stamp are each built', async () => {
    const [a, b] = await requests('ordered', [{ revision: 'same' }, { revision: 'same' }]);
    const m = await stage.master('unfolded', CONFIG);
    try {
      m.workers.connect(new ScriptedWorker('solo'));
      const rows = await completed([a!, b!]);
      expect(rows.map((r) => r.results)).toEqual([Results.SUCCESS, Results.SUCCESS]);
      expect(await buildOrder([a!, b!])).toEqual([a, b]);
    } finally {
      await m.stop();
    }
  });

  it('collapse_requests: pending requests of compatible source stamps end SKIPPED beside the newest, which is built', async () => {
    // Without changes, stamps are compatible only with the same revision (Buildbot's rule).
    const same = { revision: 'same' };
    const [a, b, c, other, rev] = await requests('folded', [
      same,
      same,
      same,
      { ...same, branch: 'feature' },
      {},
    ]);
    const m = await stage.master('fold', CONFIG);
    try {
      m.workers.connect(new ScriptedWorker('solo'));
      const rows = await completed([a!, b!, c!, other!, rev!]);
      const results = new Map(rows.map((r) => [r.id, r.results]));
      // As in Buildbot, the newest is built; the two older of its stamps are folded into it.
      expect([a, b, c, other, rev].map((id) => results.get(id))).toEqual([
        Results.SKIPPED,
        Results.SKIPPED,
        Results.SUCCESS,
        Results.SUCCESS,
        Results.SUCCESS,
      ]);
      expect(await buildOrder([a!, b!, c!, other!, rev!])).toEqual([c, other, rev]);
    } finally {
      await m.stop();
    }
  });
});

describe('four masters racing', () => {
  it('runs one build of a builder at a time on a worker, whatever its max_builds (as Buildbot)', async () => {
    // Two builds of one builder would share its directory on the worker (issue 16).
    const m = await stage.master('one-per-builder', CONFIG);
    const running = new Map<string, number>();
    const most = { twice: 0, all: 0 };
    let firstRuns: () => void = () => {};
    const firstRunning = new Promise<void>((r) => {
      firstRuns = r;
    });
    let together: () => void = () => {};
    const twoAtOnce = new Promise<void>((r) => {
      together = r;
    });
    try {
      m.workers.connect(
        new ScriptedWorker('pair', async (cmd) => {
          const builder = cmd.request.workdir.split('/')[0]!;
          running.set(builder, (running.get(builder) ?? 0) + 1);
          const all = [...running.values()].reduce((a, b) => a + b, 0);
          most.twice = Math.max(most.twice, running.get('twice') ?? 0);
          most.all = Math.max(most.all, all);
          firstRuns();
          if (all >= 2) together();
          // Each command holds its slot until the worker has run two builds at once.
          await twoAtOnce;
          running.set(builder, running.get(builder)! - 1);
          return { rc: 0 };
        }),
      );
      const [t1] = await requests('twice', [{}]);
      await firstRunning;
      // The worker has a free slot: the second build of `twice` must not take it, `other` must.
      const [t2] = await requests('twice', [{}]);
      const [o1] = await requests('other', [{}]);
      const rows = await completed([t1!, t2!, o1!]);
      expect(rows.map((r) => r.results)).toEqual([0, 0, 0]);
      expect(most).toEqual({ twice: 1, all: 2 });
    } finally {
      await m.stop();
    }
  });

  it('claim 200 requests added at once: each is claimed and built exactly once, within every worker’s slots', async () => {
    const masters = await Promise.all(
      ['race-1', 'race-2', 'race-3', 'race-4'].map((n) => stage.master(n, CONFIG)),
    );
    // The most builds any worker ran at once, by worker.
    const most = new Map<string, number>();
    try {
      const brids = (
        await Promise.all(
          BUSY.map((b, i) =>
            requests(
              b,
              Array.from({ length: i === 0 ? 68 : 66 }, () => ({})),
            ),
          ),
        )
      ).flat();
      expect(brids.length).toBe(200);
      // Two workers on each master, connected only now: every master starts racing at once.
      for (const [i, m] of masters.entries()) {
        for (const name of [`q${2 * i}`, `q${2 * i + 1}`]) {
          const w: ScriptedWorker = m.workers.connect(
            new ScriptedWorker(name, async (cmd) => {
              most.set(name, Math.max(most.get(name) ?? 0, w.running));
              await cmd.write('o', 'one\ntwo\n');
              return { rc: 0 };
            }),
          );
        }
      }
      // 200 builds on a machine that may be loaded: the limit is for a test that fails.
      const rows = await completed(brids, 200_000);
      expect(rows.length).toBe(200);
      expect(rows.every((r) => r.results === Results.SUCCESS)).toBe(true);
      const [r] = await stage.db.pool.query(sql`
        SELECT count(*)::int AS builds, count(DISTINCT b.buildrequestid)::int AS requests,
               count(DISTINCT b.masterid)::int AS masters
        FROM builds b WHERE b.buildrequestid = ANY(${brids}::int[])`);
      expect(r).toEqual({ builds: 200, requests: 200, masters: 4 });
      const [claims] = await stage.db.pool.query(sql`
        SELECT count(*)::int AS n, count(DISTINCT brid)::int AS d FROM buildrequest_claims WHERE brid = ANY(${brids}::int[])`);
      expect(claims).toEqual({ n: 200, d: 200 });
      expect(Math.max(...most.values())).toBeLessThanOrEqual(3);
      const won = masters.reduce((n, m) => n + m.master.distributor.claimed.won, 0);
      expect(won).toBe(200);
    } finally {
      await Promise.all(masters.map((m) => m.stop()));
    }
  }, 240_000);
});

describe('a pass woken by a request', () => {
  // Two builders on one worker of one slot, the one listed first with the older request,
  // whose event the master never hears: a pass over every builder would build it first.
  const TARGETED = `
log_compression: none
workers:
  - { name: tw, password: x, max_builds: 1 }
builders:
  - { name: t-first, workers: [tw], steps: [{ type: shell, command: "echo first" }] }
  - { name: t-second, workers: [tw], steps: [{ type: shell, command: "echo second" }] }
`;

  it("looks at the request's builder alone; the freed worker's builders come next", async () => {
    let deafUpTo = Number.POSITIVE_INFINITY;
    const m = await stage.quietMaster(
      'targeted',
      TARGETED,
      'tw',
      (k) => k.startsWith('buildrequests/') && Number(k.split('/')[1]) <= deafUpTo,
    );
    try {
      const [unheard] = await requests('t-first', [{}]);
      deafUpTo = unheard!;
      const [heard] = await requests('t-second', [{}]);
      await completed([unheard!, heard!]);
      // The heard request's pass looked at t-second alone; its build's end freed the worker,
      // whose builders (t-first among them) the next pass looked at.
      expect(await buildOrder([unheard!, heard!])).toEqual([heard, unheard]);
    } finally {
      await m.stop();
    }
  });
});
