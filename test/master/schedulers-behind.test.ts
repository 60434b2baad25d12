// A master's schedulers start behind its claiming (master.ts): their first ownership round,
// a transaction per scheduler and change source, no longer holds back its first build
// (load/results/fleet.md, 2026-11-29 03:29-04:00: 0.2-0.7 s at 1,000 builders). Here the
// round is held by a lock on the scheduler's row while the master starts: the build of a
// pending request must run all the same (before, claiming started only after the round, and
// this waited out its timeout), and the scheduler is this master's once the lock goes.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { findSchedulerId, transact } from '../../services/core/data/index.js';
import { sql } from '../../services/core/db/pool.js';
import { eventually, waitFor } from '../helpers/wait.js';
import { ScriptedWorker, ScriptedWorkers, Stage } from './in-process.js';

const CONFIG = `
log_compression: none
workers:
  - { name: w, password: x }
builders:
  - { name: b, workers: [w], steps: [{ type: shell, name: one, command: "echo ok" }] }
schedulers:
  - { type: triggerable, name: held, builders: [b] }
`;

/** A promise that resolves once opened. */
function opening(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((r) => {
    open = r;
  });
  return { promise, open };
}

let stage: Stage;
beforeAll(async () => {
  stage = await Stage.open();
});
afterAll(() => stage?.close());

it('runs a pending build while its schedulers’ first round still waits, then takes the scheduler on', async () => {
  // The master that stages the builder's row and the request, then leaves.
  const first = await stage.master('stager', CONFIG);
  const { brid } = await stage.request('b');
  await first.stop();
  const schedulerid = await transact(stage.ctx, (tx) => findSchedulerId(tx, 'held'));

  // Taking the scheduler inserts its scheduler_masters row, whose key share on the
  // scheduler's row waits for this lock.
  const release = opening();
  const locked = opening();
  const holding = stage.db.pool.tx(async (q) => {
    await q.query(sql`SELECT id FROM schedulers WHERE id = ${schedulerid} FOR UPDATE`);
    locked.open();
    await release.promise;
  });
  await locked.promise;

  const workers = new ScriptedWorkers();
  let attached = false;
  const starting = stage.master('behind', CONFIG, {
    listenForWorkers: async (e) => {
      attached = true;
      return workers.attach(e);
    },
  });
  try {
    await waitFor('the worker listener', () => attached);
    const worker = workers.connect(new ScriptedWorker('w'));
    const rows = await eventually(
      () => stage.db.pool.query(sql`SELECT complete FROM buildrequests WHERE id = ${brid}`),
      (r) => r[0]?.complete === 1,
    );
    expect(rows).toEqual([{ complete: 1 }]);
    expect(worker.commands).toHaveLength(1);
    // The round is still held: nobody owns the scheduler yet.
    expect(
      await stage.db.pool.query(sql`SELECT 1 FROM scheduler_masters WHERE schedulerid = ${schedulerid}`),
    ).toEqual([]);
  } finally {
    release.open();
    await holding;
  }
  const m = await starting;
  expect(m.master.schedulers.ownedNames().schedulers).toContain('held');
  await m.stop();
});
