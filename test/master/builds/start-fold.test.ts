// A build's worker_preparation (a builder without locks) is not committed on its own but
// carried by its first step's row (services/master/builds/run-build.ts' prepare): a fenced
// transaction fewer a start. What must hold: both land in one transaction; that transaction's
// commit answered as a dropped connection is applied once (the fence's retry finds it
// committed, no second worker_preparation nor step); a builder of no steps still gets its
// worker_preparation (the write after the steps' loop, which a build stopped before its
// first step takes too).
import pgPkg from '@databases/pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ConnectionPool, Queryable, SQLQuery } from '../../../services/core/db/pool.js';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { intercept } from '../../helpers/intercept.js';
import { waitFor } from '../../helpers/wait.js';
import { ScriptedWorker, Stage } from '../in-process.js';

const CONFIG = `
log_compression: none
workers:
  - { name: w1, password: x }
builders:
  - name: one-step
    workers: [w1]
    steps:
      - { type: shell, name: one, command: "echo ok" }
  - name: no-steps
    workers: [w1]
`;

/**
 * The pool, but the first transaction that writes worker_preparation commits and then answers
 * as a dropped connection; `names` are the step names that transaction wrote.
 */
function losingPreparation(pool: ConnectionPool) {
  const seen = { lost: 0, names: [] as string[] };
  const stepName = (s: SQLQuery) => {
    const { text, values } = s.format(pgPkg.pgFormat);
    if (!/INSERT INTO steps/.test(text)) return undefined;
    return values.find((v): v is string => v === 'worker_preparation' || v === 'one');
  };
  const tx = async <T>(fn: (q: Queryable) => Promise<T>) => {
    const names: string[] = [];
    const noting = (q: Queryable) =>
      intercept(q, {
        query: (s: SQLQuery) => {
          const name = stepName(s);
          if (name) names.push(name);
          return q.query(s);
        },
      });
    const result = await pool.tx((q) => fn(noting(q)));
    if (seen.lost === 0 && names.includes('worker_preparation')) {
      seen.lost++;
      seen.names = names;
      throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
    }
    return result;
  };
  return { pool: intercept(pool, { tx }), seen };
}

let stage: Stage;
let faulty: ReturnType<typeof losingPreparation>;
beforeAll(async () => {
  stage = await Stage.open();
  faulty = losingPreparation(stage.db.pool);
  (await stage.master('start-fold', CONFIG, { db: faulty.pool })).workers.connect(new ScriptedWorker('w1'));
});
afterAll(() => stage?.close());

async function stepsOfRequest(brid: number) {
  await waitFor('the request to complete', async () => {
    const [r] = await stage.db.pool.query(sql`SELECT complete FROM buildrequests WHERE id = ${brid}`);
    return r?.complete === 1;
  });
  return stage.db.pool.query(sql`
    SELECT b.results AS build, s.number, s.name, s.results, s.state_string, s.complete_at IS NOT NULL AS ended
    FROM builds b JOIN steps s ON s.buildid = b.id WHERE b.buildrequestid = ${brid} ORDER BY s.number`);
}

const ready = {
  number: 0,
  name: 'worker_preparation',
  results: Results.SUCCESS,
  state_string: 'worker w1 ready',
};

it("writes worker_preparation with the first step's row, once when that commit's answer is lost", async () => {
  const { brid } = await stage.request('one-step');
  const steps = await stepsOfRequest(brid);
  expect(faulty.seen).toEqual({ lost: 1, names: ['worker_preparation', 'one'] });
  expect(steps).toEqual([
    { build: Results.SUCCESS, ...ready, ended: true },
    {
      build: Results.SUCCESS,
      number: 1,
      name: 'one',
      results: Results.SUCCESS,
      state_string: "'echo ok'",
      ended: true,
    },
  ]);
});

it('writes worker_preparation for a builder of no steps', async () => {
  const { brid } = await stage.request('no-steps');
  expect(await stepsOfRequest(brid)).toEqual([{ build: Results.SUCCESS, ...ready, ended: true }]);
});
