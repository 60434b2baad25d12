// A force of a builder that no master has started yet (its row not written: a fresh
// database, or a force racing the first master's start) makes its request, as Buildbot's
// schedulers do (they find a builder's id by name, creating it): the request waits for a
// master that runs the builder. Before, the builder was dropped, and a force of only such
// builders left a build set with no request, complete at once (load/workers/run.ts met it
// when it forced right after the masters started).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { ReviewStack } from './lib/review-stack.js';

const NEW = 'not-started-yet';

let stack: ReviewStack;
let admin: string;
beforeAll(async () => {
  stack = await ReviewStack.start({
    patch: (c) => {
      const multi = c.force_schedulers.find((f) => f.name === 'force-multi')!;
      c.force_schedulers.push({ ...multi, name: 'force-new', builders: [NEW, 'runtests'] });
    },
  });
  admin = await stack.login('admin');
});
afterAll(async () => {
  await stack?.close();
});

it('makes a request for a builder with no row yet, and the build set waits for it', async () => {
  const rows = () => stack.db.pool.query(sql`SELECT id FROM builders WHERE name = ${NEW}`);
  expect(await rows()).toEqual([]);
  const a = await stack.rpc('/forceschedulers/force-new', 'force', {}, { session: admin });
  expect(a.status).toBe(200);
  const [bsid, brids] = a.json().result as [number, Record<string, number>];
  const [created] = await rows();
  expect(created).toBeDefined();
  expect(Object.keys(brids).map(Number).sort()).toContain(created!.id);
  expect(Object.keys(brids)).toHaveLength(2);
  const [set] = await stack.db.pool.query(sql`SELECT complete FROM buildsets WHERE id = ${bsid}`);
  expect(Number(set!.complete)).toBe(0);
  const requests = await stack.db.pool.query(
    sql`SELECT builderid, complete FROM buildrequests WHERE buildsetid = ${bsid} ORDER BY builderid`,
  );
  expect(requests).toHaveLength(2);
  expect(requests.map((r) => Number(r.complete))).toEqual([0, 0]);
});
