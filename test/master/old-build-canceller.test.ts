// Exactly once: every master's cancellers hear a change; one acts on it. Two cancellers of the
// same configuration (two masters) on the shared scheduler-suite database and the real event
// bus; each change is acted on (its superseded requests cancelled) by exactly one of them,
// whichever is first, and the other finds the change taken. The cluster test (two master
// processes, a real worker, a running build stopped) is test/e2e/old-build-canceller.test.ts.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import { addBuildset, findBuilderId, transact } from '../../services/core/data/index.js';
import { sql } from '../../services/core/db/pool.js';
import { busSubscription } from '../../services/core/events/bus.js';
import { Results } from '../../services/core/results.js';
import { OldBuildCancellers } from '../../services/master/old-build-canceller.js';
import { testEnv } from '../helpers/env.js';
import { capturedLog } from '../helpers/log-lines.js';
import { waitFor } from '../helpers/wait.js';
import { clusterPerFile, uniq } from './schedulers/lib.js';

const cluster = clusterPerFile();
const repository = uniq('repo');
const name = uniq('canceller');
const { services } = parseMasterConfig(`
services:
  - { type: old_build_canceller, name: ${name}, filters: [{ builders: [b1], repository: ${repository} }] }
`);
const masters = [capturedLog('debug'), capturedLog('debug')];
const running: OldBuildCancellers[] = [];
const subscribers: Redis[] = [];

beforeAll(async () => {
  for (const { log } of masters) {
    const subscriber = new Redis(testEnv().redisUrl);
    subscribers.push(subscriber);
    const subscribe = busSubscription(subscriber);
    await subscribe.ready;
    const c = new OldBuildCancellers({ ctx: cluster().h.ctx, services, subscribe, log });
    await c.start();
    running.push(c);
  }
});
afterAll(async () => {
  for (const c of running) await c.stop();
  for (const s of subscribers) s.disconnect();
});

/** What each master's canceller did with the change: acted on it, or found it taken. */
const handled = (changeid: number) =>
  masters.map(
    ({ lines }) =>
      lines.find((l) => l.canceller === name && l.changeid === changeid && typeof l.msg === 'string')?.msg,
  );

it('each change is acted on by one master alone', async () => {
  const { h } = cluster();
  const requests: number[] = [];
  for (let i = 1; i <= 3; i++) {
    const brid = await transact(h.ctx, async (tx) => {
      const b1 = (await findBuilderId(tx, 'b1'))!;
      const added = await addBuildset(tx, {
        scheduler: 'test',
        reason: 'test',
        sourcestamps: [{ branch: 'main', revision: `r${i}`, repository, project: '', codebase: '' }],
        builderids: [b1],
      });
      return added.brids[b1]!;
    });
    requests.push(brid);
    const changeid = await cluster().change({ branch: 'main', revision: `c${i}`, repository });
    await waitFor(`change ${i} to cancel request ${brid}`, async () => {
      const [br] = await h.db.pool.query(sql`SELECT complete, results FROM buildrequests WHERE id = ${brid}`);
      return br.complete === 1 && br.results === Results.CANCELLED;
    });
    await waitFor(`both masters to handle change ${i}`, async () => handled(changeid).every(Boolean));
    expect(handled(changeid).sort()).toEqual(['acting on change', 'change taken by another master']);
  }
  // Whichever master acted on a change cancelled that change's one superseded request.
  const cancelled = masters.flatMap(({ lines }) =>
    lines
      .filter((l) => l.msg === 'cancelled superseded work' && l.canceller === name)
      .map((l) => (l.requests as number[])[0]!),
  );
  expect(cancelled.sort((a, b) => a - b)).toEqual(requests);
});
