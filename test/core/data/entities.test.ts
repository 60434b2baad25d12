// The entities events carry are what the read API answers for the same row: both render the
// one definition of each entity (services/core/entities/), and this holds them equal on every
// build, step, log, change, worker, builder, scheduler, build request, master, source stamp
// and change source a real Buildbot wrote into the oracle's fixture.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entity } from '../../../services/core/data/entities.js';
import { sql } from '../../../services/core/db/pool.js';
import { build } from '../../../services/core/entities/build.js';
import { builder } from '../../../services/core/entities/builder.js';
import { buildrequest } from '../../../services/core/entities/buildrequest.js';
import { change } from '../../../services/core/entities/change.js';
import { changesource } from '../../../services/core/entities/changesource.js';
import { type Entity, keyOf } from '../../../services/core/entities/field.js';
import { log } from '../../../services/core/entities/log.js';
import { master } from '../../../services/core/entities/master.js';
import { scheduler } from '../../../services/core/entities/scheduler.js';
import { sourcestamp } from '../../../services/core/entities/sourcestamp.js';
import { step } from '../../../services/core/entities/step.js';
import { worker } from '../../../services/core/entities/worker.js';
import { apiGet, type Harness, openHarness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await openHarness('fixture');
});
afterAll(async () => {
  await h?.close();
});

const cases: [string, Entity][] = [
  build,
  step,
  log,
  change,
  worker,
  builder,
  scheduler,
  buildrequest,
  master,
  sourcestamp,
  changesource,
].map((e) => [e.plural, e]);

describe('entities agree with the read API', () => {
  it.each(cases)('%s', async (plural, e) => {
    const ids: { id: number }[] = await h.db.pool.query(
      sql`SELECT ${keyOf(e).sql({})} AS id FROM ${sql.ident(e.table)} a ORDER BY 1`,
    );
    expect(ids.length).toBeGreaterThan(0);
    for (const { id } of ids) {
      const event = await entity(h.db.pool, e, id);
      const [api] = await apiGet(h.db.pool, `${plural}/${id}`);
      expect(event, `${plural} ${id}`).toEqual(api);
    }
  });
});
