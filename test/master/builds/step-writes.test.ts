// A step's folded writes (services/master/builds/step-writes.ts) under the build's fence: the
// log's last unfinished line and its finish ride in the step's end, and when that transaction
// commits but its answer is lost, the fence's retry finds it committed and applies nothing
// twice; the log's lines are exact, and what follows their commit is told once.
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  addLog,
  appendLog,
  claimBuildRequests,
  findBuilderId,
  finishStep,
  masterActive,
  newBuild,
  newStep,
  startStep,
  transact,
} from '../../../services/core/data/index.js';
import type { ConnectionPool, Queryable } from '../../../services/core/db/pool.js';
import { sql } from '../../../services/core/db/pool.js';
import { LogWriter } from '../../../services/master/builds/log-writer.js';
import { StepWrites } from '../../../services/master/builds/step-writes.js';
import { buildContext } from '../../../services/master/claims.js';
import { Stage } from '../in-process.js';

let stage: Stage;
beforeAll(async () => {
  stage = await Stage.open();
});
afterAll(() => stage?.close());

/** The pool, but the next transaction armed commits and then answers as a dropped connection. */
function losingAnswers(pool: ConnectionPool): { pool: ConnectionPool; arm: () => void; lost: () => number } {
  let armed = false;
  let lost = 0;
  const wrapped = new Proxy(pool, {
    get(target, prop) {
      if (prop === 'tx')
        return async <T>(fn: (q: Queryable) => Promise<T>) => {
          const result = await target.tx(fn);
          if (armed) {
            armed = false;
            lost++;
            throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
          }
          return result;
        };
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { pool: wrapped, arm: () => (armed = true), lost: () => lost };
}

/** A build of a request claimed by this test's master, and its fence over a pool that may lose answers. */
async function fencedBuild() {
  const { brid } = await stage.request('folded');
  const { buildid, masterid } = await transact(stage.ctx, async (tx) => {
    const masterid = await masterActive(tx, 'folded-writes');
    expect(await claimBuildRequests(tx, [brid], masterid)).toBe(true);
    const [r] = await tx.q.query(sql`SELECT builderid FROM buildrequests WHERE id = ${brid}`);
    const b = await newBuild(tx, { builderid: r.builderid, buildrequestid: brid, workerid: null, masterid });
    return { buildid: b.buildid, masterid };
  });
  const faulty = losingAnswers(stage.db.pool);
  const fence = buildContext({ ...stage.ctx, db: faulty.pool }, buildid, masterid, { valid: () => true });
  return { buildid, faulty, fence };
}

it("a step's end carrying its log's last line and finish is applied once when its commit's answer is lost", async () => {
  await transact(stage.ctx, (tx) => findBuilderId(tx, 'folded'));
  const { buildid, faulty, fence } = await fencedBuild();
  const { stepid } = await transact(fence.ctx, async (tx) => {
    const s = await newStep(tx, buildid, 'one');
    await startStep(tx, s.stepid);
    return s;
  });
  const writes = new StepWrites(fence.ctx);
  // The log's add rides in the step's next transaction, as runCommand's does.
  const logid = await writes.transact((tx) => addLog(tx, stepid, 'stdio', 's'));
  const told: string[] = [];
  const log = new LogWriter(fence.ctx, stage.ctx.redis, logid, 's', 'raw', undefined);
  log.observe((_, line) => told.push(line));
  await log.write('o', 'first\nlast, without its newline');
  const closing = log.closing();
  let after = 0;
  writes.fold(closing.write, () => {
    closing.after();
    after++;
  });
  faulty.arm();
  await writes.transact((tx) => finishStep(tx, stepid, 0));

  expect(faulty.lost()).toBe(1);
  const chunks = await stage.db.pool.query(
    sql`SELECT content FROM logchunks WHERE logid = ${logid} ORDER BY first_line`,
  );
  const lines = chunks.flatMap((c) => c.content.toString().split('\n').filter(Boolean));
  expect(lines).toEqual(['ofirst', 'olast, without its newline']);
  const [l] = await stage.db.pool.query(sql`SELECT complete, num_lines FROM logs WHERE id = ${logid}`);
  expect(l).toEqual({ complete: 1, num_lines: 2 });
  const [s] = await stage.db.pool.query(sql`SELECT results FROM steps WHERE id = ${stepid}`);
  expect(s.results).toBe(0);
  expect(after).toBe(1);
  expect(told).toEqual(['first', 'last, without its newline']);
});

it('a write that answers nothing, recorded by its fence alone, is applied once when its answer is lost; one that answers gets its answer back', async () => {
  // buildWriteFence records the write's number in its own statement; only an answer is
  // recorded after the body (claims.ts). A retry of a committed write must find the number
  // either way, and the answer when there was one.
  const { buildid, faulty, fence } = await fencedBuild();
  faulty.arm();
  const step = await transact(fence.ctx, (tx) => newStep(tx, buildid, 'answers'));
  const logid = await transact(fence.ctx, (tx) => addLog(tx, step.stepid, 'stdio', 's'));
  faulty.arm();
  const answered = await transact(fence.ctx, async (tx) => {
    await appendLog(tx, logid, 'oonce\n');
  });
  expect(faulty.lost()).toBe(2);
  expect(answered).toBeUndefined();
  const steps = await stage.db.pool.query(sql`SELECT id FROM steps WHERE buildid = ${buildid}`);
  expect(steps.map((s) => s.id)).toEqual([step.stepid]);
  const [l] = await stage.db.pool.query(sql`SELECT num_lines FROM logs WHERE id = ${logid}`);
  expect(l.num_lines).toBe(1);
  const [w] = await stage.db.pool.query(
    sql`SELECT seq, result FROM flotilla.build_writes WHERE buildid = ${buildid}`,
  );
  expect(w).toEqual({ seq: 3, result: null });
});
