// The statements a short build sends to PostgreSQL, from its request's claim to its end,
// counted on the master's own pool: issue 35's fleet found PostgreSQL spending more CPU on a
// build than the masters (load/results/fleet.md, 2026-11-28 22:17-22:57), much of it on
// transaction bookkeeping (BEGIN, the fence's read and record, COMMIT) and on events reading
// back what was just written. This keeps the count from creeping back.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ConnectionPool, Queryable, SQLQuery } from '../../../services/core/db/pool.js';
import { sql } from '../../../services/core/db/pool.js';
import { eventually } from '../../helpers/wait.js';
import { type InProcessMaster, ScriptedWorker, Stage } from '../in-process.js';

const CONFIG = `
log_compression: none
workers:
  - { name: w1, password: x }
builders:
  - name: short
    workers: [w1]
    steps:
      - { type: shell, name: one, command: "echo ok" }
`;

/** A pool that counts every statement sent through it, BEGIN and COMMIT of each transaction included. */
function counting(pool: ConnectionPool): { pool: ConnectionPool; sent: () => number } {
  let n = 0;
  const wrap = (q: Queryable): Queryable =>
    new Proxy(q, {
      get(target, prop) {
        if (prop === 'query')
          return (s: SQLQuery) => {
            n++;
            return target.query(s);
          };
        const v = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  const counted = new Proxy(pool, {
    get(target, prop) {
      if (prop === 'query')
        return (s: SQLQuery) => {
          n++;
          return target.query(s);
        };
      if (prop === 'tx')
        return <T>(fn: (q: Queryable) => Promise<T>) => {
          n += 2;
          return target.tx((q) => fn(wrap(q)));
        };
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { pool: counted, sent: () => n };
}

let stage: Stage;
let m: InProcessMaster;
let counter: ReturnType<typeof counting>;
beforeAll(async () => {
  stage = await Stage.open();
  counter = counting(stage.db.pool);
  // A poll slower than the build: the count is the build's, not the idle passes'.
  m = await stage.master('statements', CONFIG, { db: counter.pool, timing: { distributorPollMs: 60_000 } });
  m.workers.connect(new ScriptedWorker('w1'));
});
afterAll(() => stage?.close());

async function oneBuild(): Promise<void> {
  const { brid } = await stage.request('short');
  m.master.distributor.kick();
  await eventually(
    () => stage.db.pool.query(sql`SELECT complete FROM buildrequests WHERE id = ${brid}`),
    (rows) => rows[0]?.complete === 1,
  );
  await m.master.runner.whenIdle();
}

it('a build of one short step makes at most 61 statements from its claim to its end', async () => {
  await oneBuild(); // the master's first build: registration and first looks out of the way
  const before = counter.sent();
  await oneBuild();
  const sent = counter.sent() - before;
  // 111 before 2026-11-28 22:50 (the properties' own fenced transaction, a step's start in
  // another, and an entity read after every write of a step or a build), 91 after, 92 once
  // the row's transaction checked the claim; 78 on 2026-11-29 (a log's add, append and finish
  // in two statements, two and one instead of four, four and three; the step's `running`
  // state string in its log's transaction and the log's finish in the step's end: two fenced
  // transactions fewer, step-writes.ts); 74 with each step written started and ended in one
  // UPDATE (newStep's started, endStep); 73 with the build's state string and finish in one
  // (endBuild); 69 with worker_preparation written and ended in one transaction when the
  // builder has no locks to wait for; 63 with the first properties' facts read and written in
  // one statement each and the claim checked in the row's INSERT; 61 with the build's row not
  // locked again by newStep in a fenced transaction, whose fence holds it (core/data/
  // build-lock.ts: worker_preparation's and the step's); 59 with a write's number recorded by
  // its fence's statement and no record after a write that answers nothing (worker_preparation's,
  // the build's end: buildWriteFence). The margin is the one idle look for work that the
  // build's end may or may not come before.
  expect(sent).toBeLessThanOrEqual(61);
  expect(sent).toBeGreaterThan(30);
});
