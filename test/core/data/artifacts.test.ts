// Artifacts as core/data/artifacts.ts keeps them, against a real database: an upload left
// unfinished (its master died, or lost the database, mid-upload) goes with its large object
// when its build ends, whether the build is finished by its master or by a dead master's
// expiry; complete artifacts stay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appendArtifact,
  completeArtifact,
  expireMasters,
  finishBuild,
  masterActive,
  newArtifact,
  newBuild,
  newStep,
} from '../../../services/core/data/index.js';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { buildParts, type Harness, openHarness, uniq } from './harness.js';

let h: Harness;
let live: number;
beforeAll(async () => {
  h = await openHarness();
  live = await h.run((tx) => masterActive(tx, uniq('artifact-master')));
});
afterAll(() => h?.close());

/** A build with a complete artifact and one half-written: their ids and the half one's object. */
async function buildWithUploads(masterid?: number) {
  return h.run(async (tx) => {
    const parts = await buildParts(tx);
    const { buildid } = await newBuild(tx, {
      builderid: parts.builderid,
      buildrequestid: parts.brid,
      workerid: parts.workerid,
      masterid: masterid ?? parts.masterid,
    });
    const { stepid } = await newStep(tx, buildid, 'upload');
    const done = await newArtifact(tx, { buildid, stepid, name: 'done.txt', kind: 'file' });
    await appendArtifact(tx, done, Buffer.from('all of it'));
    await completeArtifact(tx, done);
    const half = await newArtifact(tx, { buildid, stepid, name: 'half.bin', kind: 'file' });
    await appendArtifact(tx, half, Buffer.alloc(4096, 7));
    const [{ object }] = await tx.q.query(sql`SELECT object FROM flotilla.artifacts WHERE id = ${half}`);
    return { buildid, done, half, object: object as number };
  });
}

async function left(buildid: number, object: number) {
  const rows = await h.db.pool.query(
    sql`SELECT name FROM flotilla.artifacts WHERE buildid = ${buildid} ORDER BY id`,
  );
  const [objects] = await h.db.pool.query(
    sql`SELECT count(*)::int AS n FROM pg_largeobject_metadata WHERE oid = ${object}`,
  );
  return { names: rows.map((r) => r.name as string), halfObject: objects.n as number };
}

describe('an upload left unfinished', () => {
  it('goes when its build is finished, object and all; the complete one stays', async () => {
    const b = await buildWithUploads();
    expect(await left(b.buildid, b.object)).toEqual({ names: ['done.txt', 'half.bin'], halfObject: 1 });
    await h.run((tx) => finishBuild(tx, b.buildid, Results.SUCCESS));
    expect(await left(b.buildid, b.object)).toEqual({ names: ['done.txt'], halfObject: 0 });
  });

  it("goes when a dead master's expiry ends its build RETRY", async () => {
    const gone = await h.run((tx) => masterActive(tx, uniq('artifact-master')));
    const b = await buildWithUploads(gone);
    await h.db.pool.query(sql`UPDATE masters SET last_active = last_active - 3600 WHERE id = ${gone}`);
    expect(await h.run((tx) => expireMasters(tx, 600, live))).toContain(gone);
    const [build] = await h.db.pool.query(sql`SELECT results FROM builds WHERE id = ${b.buildid}`);
    expect(build.results).toBe(Results.RETRY);
    expect(await left(b.buildid, b.object)).toEqual({ names: ['done.txt'], halfObject: 0 });
  });
});
