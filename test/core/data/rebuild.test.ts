// A rebuild records the build it repeats, as Buildbot 4.0's rebuildBuildrequest does
// (data/buildrequests.py; buildsets.rebuilt_buildid): the first build of the rebuilt build's
// request, or, when that build set is itself a rebuild, the build it repeated, so that every
// rebuild names the original; the API answers it on the new build set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rebuildBuild } from '../../../services/core/data/buildsets.js';
import { sql } from '../../../services/core/db/pool.js';
import { apiGet, type Harness, openHarness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await openHarness('fixture');
});
afterAll(async () => {
  await h?.close();
});

describe('rebuild', () => {
  it('names the first build of the request, and the original through a rebuild of a rebuild', async () => {
    const [b] = await h.db.pool.query(sql`
      SELECT b.id, b.buildrequestid, (SELECT min(f.id) FROM builds f WHERE f.buildrequestid = b.buildrequestid) AS first
      FROM builds b ORDER BY b.id LIMIT 1`);
    const { bsid } = await h.run((tx) => rebuildBuild(tx, b.id));
    expect((await apiGet(h.db.pool, `buildsets/${bsid}`))[0]).toMatchObject({ rebuilt_buildid: b.first });

    // A build of that rebuild, rebuilt again: still the original.
    const [br] = await h.db.pool.query(
      sql`SELECT id, builderid FROM buildrequests WHERE buildsetid = ${bsid}`,
    );
    const [again] = await h.db.pool.query(sql`
      INSERT INTO builds (number, builderid, buildrequestid, workerid, masterid, started_at, state_string, locks_duration_s)
      SELECT max(number) + 1, ${br.builderid}, ${br.id}, NULL, (SELECT min(id) FROM masters), 1, 'x', 0
      FROM builds WHERE builderid = ${br.builderid} RETURNING id`);
    const { bsid: bsid2 } = await h.run((tx) => rebuildBuild(tx, again.id));
    expect((await apiGet(h.db.pool, `buildsets/${bsid2}`))[0]).toMatchObject({ rebuilt_buildid: b.first });
  });
});
