// A master told that events were lost (flotilla/events/lost: a process's publisher dropped
// events it could not send while Redis was away, core/events/publisher.ts) looks for work at
// once: a request whose `new` event was among them is claimed and built without waiting for
// the distributor's poll. The master here never hears requests' events (as if Redis had lost
// them) and polls once an hour, so only the mark can get the request built.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addBuildset, findBuilderId, transact } from '../../services/core/data/index.js';
import { sql } from '../../services/core/db/pool.js';
import { EVENTS_LOST_KEY, publish } from '../../services/core/events/bus.js';
import { Results } from '../../services/core/results.js';
import { eventually } from '../helpers/wait.js';
import { Stage } from './in-process.js';

const CONFIG = `
log_compression: none
workers:
  - { name: w, password: x }
builders:
  - { name: b, workers: [w], steps: [{ type: shell, command: "echo ok" }] }
`;

let stage: Stage;
beforeAll(async () => {
  stage = await Stage.open();
});
afterAll(() => stage?.close());

describe('a master told that events were lost', () => {
  it('claims a request whose event it never heard, without waiting for its poll', async () => {
    // Once its start's and its worker's passes are done, nothing else asks for one until the
    // mark (no event of a request reaches it, no build runs).
    const m = await stage.quietMaster('lost', CONFIG, 'w', (k) => k.startsWith('buildrequests/'));
    try {
      const brid = await transact(stage.ctx, async (tx) => {
        const builderid = (await findBuilderId(tx, 'b'))!;
        const added = await addBuildset(tx, {
          scheduler: 'test',
          sourcestamps: [{ codebase: '', repository: 'r', branch: 'main', revision: 'r1', project: '' }],
          reason: 'its event is lost',
          builderids: [builderid],
        });
        return added.brids[builderid]!;
      });
      await publish(stage.ctx.redis, EVENTS_LOST_KEY.split('/'), { lost: 1 });
      const rows = await eventually(
        () => stage.db.pool.query(sql`SELECT results FROM buildrequests WHERE id = ${brid} AND complete = 1`),
        (r) => r.length === 1,
        { timeoutMs: 60_000 },
      );
      expect(rows.map((r) => r.results)).toEqual([Results.SUCCESS]);
    } finally {
      await m.stop();
    }
  });
});
