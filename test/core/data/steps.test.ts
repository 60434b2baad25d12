// newStep (numbers, Buildbot's unique names), startStep, setStepStateString, addStepURL,
// finishStep: rows, events under both step keys, and the read API's agreement.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBuild } from '../../../services/core/data/builds.js';
import {
  addStepURL,
  endStep,
  finishStep,
  newStep,
  setStepStateString,
  startStep,
} from '../../../services/core/data/steps.js';
import { type DataContext, transact } from '../../../services/core/data/transaction.js';
import { type SQLQuery, sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { apiGet, barrier, buildParts, type Harness, openHarness } from './harness.js';

let h: Harness;
let ids: { masterid: number; builderid: number; workerid: number; brid: number };

beforeAll(async () => {
  h = await openHarness();
  ids = await h.run(buildParts);
});
afterAll(async () => {
  await h?.close();
});

const build = () => h.run(async (tx) => (await newBuild(tx, { ...ids, buildrequestid: ids.brid })).buildid);

describe('newStep', () => {
  it('numbers steps from 0, starts them `pending`, and makes names unique as Buildbot does', async () => {
    const buildid = await build();
    await h.tap.clear();
    const made = await h.run(async (tx) => [
      await newStep(tx, buildid, 'compile'),
      await newStep(tx, buildid, 'compile'),
      await newStep(tx, buildid, 'compile'),
      await newStep(tx, buildid, 'test'),
    ]);
    expect(made.map((s) => [s.number, s.name])).toEqual([
      [0, 'compile'],
      [1, 'compile_1'],
      [2, 'compile_2'],
      [3, 'test'],
    ]);
    const [row] = await h.db.pool.query(sql`SELECT * FROM steps WHERE id = ${made[0]!.stepid}`);
    expect(row).toMatchObject({
      state_string: 'pending',
      started_at: null,
      complete_at: null,
      urls_json: '[]',
    });
    const keys = await h.tap.keys(`builds/${buildid}/steps/`, `steps/${made[0]!.stepid}/`);
    expect(keys.slice(0, 3)).toEqual([
      `builds/${buildid}/steps/${made[0]!.stepid}/new`,
      `steps/${made[0]!.stepid}/new`,
      `builds/${buildid}/steps/${made[1]!.stepid}/new`,
    ]);
    const [api] = await apiGet(h.db.pool, `builds/${buildid}/steps/compile_1`);
    const [event] = await h.tap.events(`steps/${made[1]!.stepid}/new`);
    expect(event!.m).toEqual(api);
  });

  it('keeps a suffixed name within 50 characters', async () => {
    const buildid = await build();
    const long = 'x'.repeat(50);
    const [a, b] = await h.run(async (tx) => [
      await newStep(tx, buildid, long),
      await newStep(tx, buildid, long),
    ]);
    expect(a!.name).toBe(long);
    expect(b!.name).toBe(`${'x'.repeat(48)}_1`);
    await expect(h.run((tx) => newStep(tx, buildid, 'y'.repeat(51)))).rejects.toMatchObject({
      code: 'INVALID',
    });
  });

  it('numbers and names concurrent steps of one build without clashing', async () => {
    const buildid = await build();
    const together = barrier(6);
    const made = await Promise.all(
      Array.from({ length: 6 }, () =>
        transact({ ...h.ctx, db: h.wide }, async (tx) => {
          await together();
          return newStep(tx, buildid, 'same');
        }),
      ),
    );
    expect(made.map((s) => s.number).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(new Set(made.map((s) => s.name)).size).toBe(6);
  });
  it("under a fence that locked the build's row, asks no lock again and still numbers concurrent steps apart", async () => {
    // A build's fenced transactions (services/master/claims.ts) lock its row first and say so
    // (lockedBuild): newStep then sends a statement fewer (build-lock.ts). Six writers at once
    // through such transactions number and name their steps apart.
    const buildid = await build();
    let sent = 0;
    const fenced: DataContext = {
      ...h.ctx,
      db: h.wide,
      lockedBuild: buildid,
      runTx: (body) =>
        h.wide.tx(async (q) => {
          await q.query(sql`SELECT id FROM builds WHERE id = ${buildid} FOR NO KEY UPDATE`);
          const counted = new Proxy(q, {
            get: (t, prop) =>
              prop === 'query'
                ? (x: SQLQuery) => {
                    sent++;
                    return t.query(x);
                  }
                : Reflect.get(t, prop, t),
          });
          return body(counted);
        }),
    };
    // All six at once: each waits for the row's lock in its fence, as a build's writes would.
    const made = await Promise.all(
      Array.from({ length: 6 }, () => transact(fenced, (tx) => newStep(tx, buildid, 'same'))),
    );
    expect(made.map((s) => s.number).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(new Set(made.map((s) => s.name)).size).toBe(6);
    // The row's INSERT alone, its number and name chosen in it: no lock of the build's row of
    // its own, and no read of the build's steps before it.
    expect(sent).toBe(6);
    // Without the fence's word, the lock is asked for (a statement more).
    sent = 0;
    await transact({ ...fenced, lockedBuild: undefined }, (tx) => newStep(tx, buildid, 'one more'));
    expect(sent).toBe(2);
  });
});

describe('the life of a step', () => {
  it('starts, changes its state string, gathers URLs once each, and finishes once', async () => {
    const buildid = await build();
    const { stepid } = await h.run((tx) => newStep(tx, buildid, 'compile'));
    await h.tap.clear();
    await h.run((tx) => startStep(tx, stepid));
    await h.run((tx) => setStepStateString(tx, stepid, 'compiling'));
    await h.run(async (tx) => {
      await addStepURL(tx, stepid, 'report', 'http://example.test/r');
      await addStepURL(tx, stepid, 'report', 'http://example.test/r');
      await addStepURL(tx, stepid, 'coverage ✓', 'http://example.test/c');
    });
    expect(await h.run((tx) => finishStep(tx, stepid, Results.FAILURE, true))).toBe(true);
    expect(await h.run((tx) => finishStep(tx, stepid, Results.SUCCESS))).toBe(false);

    const [api] = await apiGet(h.db.pool, `builds/${buildid}/steps/compile`);
    expect(api).toMatchObject({
      stepid,
      state_string: 'compiling',
      complete: true,
      results: Results.FAILURE,
      hidden: true,
      urls: [
        { name: 'report', url: 'http://example.test/r' },
        { name: 'coverage ✓', url: 'http://example.test/c' },
      ],
    });
    expect(api!.started_at).toEqual(expect.any(Number));
    const events = await h.tap.events(`steps/${stepid}/`);
    expect(events.map((e) => e.k)).toEqual([
      `steps/${stepid}/started`,
      `steps/${stepid}/updated`,
      `steps/${stepid}/updated`,
      `steps/${stepid}/updated`,
      `steps/${stepid}/updated`,
      `steps/${stepid}/finished`,
    ]);
    expect(events.at(-1)!.m).toEqual(api);
  });

  it('written started, and ended in one write, makes the rows and events of the separate calls', async () => {
    // run-step.ts writes a step started (newStep's started) and ends it with endStep: a
    // statement and its triggers fewer each (load/results/fleet.md, 2026-11-29 00:40).
    const buildid = await build();
    await h.tap.clear();
    const apart = await h.run(async (tx) => {
      const s = await newStep(tx, buildid, 'apart');
      await startStep(tx, s.stepid);
      return s.stepid;
    });
    await h.run(async (tx) => {
      await setStepStateString(tx, apart, 'done');
      await finishStep(tx, apart, Results.WARNINGS, true);
    });
    const together = (await h.run((tx) => newStep(tx, buildid, 'together', { started: true }))).stepid;
    expect(await h.run((tx) => endStep(tx, together, 'done', Results.WARNINGS, true))).toBe(true);
    // Ended already: the state string alone, as setStepStateString and finishStep leave it.
    expect(await h.run((tx) => endStep(tx, together, 'again', Results.SUCCESS))).toBe(false);
    const shape = (id: number) => h.tap.shapes(`steps/${id}/`, ['stepid', 'number', 'name']);
    const events = await shape(together);
    expect(events.map((e) => e.k)).toEqual(['new', 'started', 'updated', 'finished', 'updated']);
    expect(events.slice(0, 4)).toEqual(await shape(apart));
    const [api] = await apiGet(h.db.pool, `builds/${buildid}/steps/together`);
    expect(api).toMatchObject({
      state_string: 'again',
      complete: true,
      results: Results.WARNINGS,
      hidden: true,
    });
    expect(events.at(-1)!.m).toMatchObject({ state_string: 'again', complete: true, hidden: true });
  });

  it('answers NOT_FOUND for a step or build that does not exist', async () => {
    await expect(h.run((tx) => newStep(tx, -1, 'x'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(h.run((tx) => startStep(tx, -1))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(h.run((tx) => addStepURL(tx, -1, 'a', 'b'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(h.run((tx) => finishStep(tx, -1, 0))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(h.run((tx) => endStep(tx, -1, 'x', 0))).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
