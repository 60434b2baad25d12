// A build keeps its place in the master's start gate (services/master/builds/start-gate.ts)
// from its row to its first command: the next build's row waits for it. Before, the gate let
// a build go at its row's commit, so a claim pass of more builds than the gate holds wrote
// every row before any first command (load/results/fleet.md, 2026-11-29 01:45). Eleven builds
// claimed in one pass, against a gate of ten: the eleventh row may be written only once a
// command went out. Real database and Redis, scripted workers (in-process.ts).
import { pgFormat } from '@databases/pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addBuildset, findBuilderId, transact } from '../../../services/core/data/index.js';
import type { ConnectionPool, Queryable, SQLQuery } from '../../../services/core/db/pool.js';
import { sql } from '../../../services/core/db/pool.js';
import { eventually } from '../../helpers/wait.js';
import { type InProcessMaster, ScriptedWorker, Stage } from '../in-process.js';

// runner.ts's STARTS_AT_ONCE, and one build more.
const GATE = 10;
const N = GATE + 1;
const names = Array.from({ length: N }, (_, i) => i);
const CONFIG = `
log_compression: none
workers:
${names.map((i) => `  - { name: w${i}, password: x }`).join('\n')}
  - { name: wc, password: x }
builders:
${names.map((i) => `  - { name: b${i}, workers: [w${i}], steps: [{ type: shell, name: one, command: "echo ok" }] }`).join('\n')}
${names.map((i) => `  - { name: p${i}, workers: [w${i}], steps: [{ type: trigger, name: go, schedulers: [kids], waitForFinish: true }] }`).join('\n')}
  - { name: child, workers: [wc], steps: [{ type: shell, name: work, command: "echo child" }] }
schedulers:
  - { type: triggerable, name: kids, builders: [child] }
`;

let stage: Stage;
let m: InProcessMaster;
const workers = names.map((i) => new ScriptedWorker(`w${i}`));
/** For each build row's INSERT, in the order they were sent: the commands sent before it. */
const commandsAtRow: number[] = [];
const commandsSent = () => workers.reduce((n, w) => n + w.commands.length, 0);

/** The master's pool, noting the commands sent by the time each build row's INSERT is. */
function noting(pool: ConnectionPool): ConnectionPool {
  const note = (s: SQLQuery) => {
    if (/\bINSERT INTO builds\b/.test(s.format(pgFormat).text)) commandsAtRow.push(commandsSent());
  };
  const inTx = (q: Queryable): Queryable =>
    new Proxy(q, {
      get(target, prop) {
        if (prop === 'query')
          return (s: SQLQuery) => {
            note(s);
            return target.query(s);
          };
        const v = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  return new Proxy(pool, {
    get(target, prop) {
      if (prop === 'tx') return <T>(fn: (q: Queryable) => Promise<T>) => target.tx((q) => fn(inTx(q)));
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

beforeAll(async () => {
  stage = await Stage.open();
  m = await stage.master('gate', CONFIG, {
    db: noting(stage.db.pool),
    timing: { distributorPollMs: 60_000 },
  });
  for (const w of workers) m.workers.connect(w);
  m.workers.connect(new ScriptedWorker('wc'));
});
afterAll(() => stage?.close());

/** One build set for these builders: its requests are committed, and claimed, together; run to their end. */
async function buildAll(builders: string[]): Promise<void> {
  const brids = await transact(stage.ctx, async (tx) => {
    const builderids: number[] = [];
    for (const b of builders) builderids.push((await findBuilderId(tx, b, false))!);
    const added = await addBuildset(tx, {
      scheduler: 'test',
      sourcestamps: [{ codebase: '', repository: 'r', branch: 'main', revision: 'abc', project: '' }],
      reason: 'test',
      builderids,
    });
    return Object.values(added.brids);
  });
  m.master.distributor.kick();
  await eventually(
    () =>
      stage.db.pool.query(
        sql`SELECT count(*)::int AS n FROM buildrequests WHERE complete = 1 AND id = ANY(${brids})`,
      ),
    (rows) => rows[0]?.n === brids.length,
  );
  await m.master.runner.whenIdle();
}

it('a build leaves the start gate at its first command, not at its row', async () => {
  await buildAll(names.map((i) => `b${i}`));
  expect(commandsAtRow).toHaveLength(N);
  expect(commandsSent()).toBe(N);
  // The k-th row (from 1) past the gate's size comes after at least k - GATE first commands.
  for (const [k, sent] of commandsAtRow.entries()) expect(sent).toBeGreaterThanOrEqual(k + 1 - GATE);
});

it('a build that waits for others lets go of the gate first: as many triggers as it holds still end', async () => {
  // Eleven parents waiting for their children: had they kept their places to a command they
  // never send, the gate would be theirs and no child could start.
  await buildAll(names.map((i) => `p${i}`));
  const rows = await stage.db.pool.query(
    sql`SELECT b.name = 'child' AS child, count(*)::int AS n, max(r.results)::int AS worst
        FROM buildrequests r JOIN builders b ON b.id = r.builderid
        WHERE r.complete = 1 AND (b.name = 'child' OR b.name LIKE 'p%') GROUP BY 1 ORDER BY 1`,
  );
  expect(rows).toEqual([
    { child: false, n: N, worst: 0 },
    { child: true, n: N, worst: 0 },
  ]);
});
