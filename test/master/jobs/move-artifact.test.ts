// move-artifact through real BullMQ, PostgreSQL, Redis and the tests' S3 server (which checks
// every signature): a complete artifact leaves its large object for one object under a
// content-hash key, every range reading the same from either place (services/core/artifacts/
// read.ts, what the API and the file_download step read through); a read that straddles the
// move goes on from the store; queued twice, or after an upload nobody recorded, it is
// recorded once, to one object; one still being written stays in PostgreSQL (larger ones,
// in parts: move-multipart.test.ts); retention, and a replacing upload, delete its object through object_garbage.
import { randomBytes } from 'node:crypto';
import type { Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { readArtifactRange } from '../../../services/core/artifacts/read.js';
import { retention } from '../../../services/core/config/master-config/retention.js';
import { sql } from '../../../services/core/db/pool.js';
import type { ObjectStore } from '../../../services/core/objstore/client.js';
import {
  artifactObjectKey,
  type MoveArtifactData,
  moveArtifactProcessor,
} from '../../../services/master/jobs/move-artifact.js';
import { runRetention } from '../../../services/master/jobs/retention.js';
import { addArtifact, Logs, quiet, storeJobsSuite, waitFor } from './helpers.js';

const t = storeJobsSuite('move-artifact-test', 'ci/');
const KiB = 1024;

interface Place {
  key: string | null;
  lo: number | null;
  loExists: boolean;
}
const placeOf = async (id: number): Promise<Place> =>
  (
    (await t.h.db.pool.query(sql`
      SELECT object_key AS key, object::int8::float8 AS lo,
             EXISTS (SELECT 1 FROM pg_largeobject_metadata m WHERE m.oid = a.object) AS "loExists"
      FROM flotilla.artifacts a WHERE id = ${id}`)) as Place[]
  )[0]!;
const isMoved = async (id: number) => (await placeOf(id)).key !== null;

const move = (id: number) =>
  moveArtifactProcessor(
    t.h.ctx,
    t.store,
    quiet,
  )({
    data: { id },
    id: `move-artifact-${id}`,
  } as Job<MoveArtifactData>);

const read = (id: number, offset: number, length: number, from: ObjectStore | null = t.store) =>
  readArtifactRange(t.h.db.pool, from, id, offset, length).then((b) => Buffer.from(b));

const ranges = (n: number): [number, number][] => [
  [0, n],
  [0, 1],
  [n - 1, 10],
  [1000, 70 * KiB],
  [n - 5, 5],
];
const putsOf = (id: number) =>
  t.s3.requests.filter((r) => r.method === 'PUT' && r.key.startsWith(`ci/artifacts/${id}/`));

describe('move-artifact', () => {
  it('moves a complete artifact to one object, its large object unlinked; every range reads the same', async () => {
    const bytes = randomBytes(700 * KiB);
    const id = await addArtifact(t.h, t.logs, 'out/app.bin', bytes);
    const before = await Promise.all(ranges(bytes.length).map(([o, n]) => read(id, o, n)));
    const { lo } = await placeOf(id);
    t.jobs.queueMoveArtifactSoon(id);
    await waitFor('the artifact to move', () => isMoved(id));
    const after = await placeOf(id);
    expect(after.key).toMatch(new RegExp(`^ci/artifacts/${id}/[0-9a-f]{16}$`));
    expect(after.lo).toBeNull();
    expect(
      await t.h.db.pool.query(sql`SELECT 1 AS ok FROM pg_largeobject_metadata WHERE oid = ${lo}::int8::oid`),
    ).toEqual([]);
    expect(t.s3.objects.get(after.key!)?.equals(bytes)).toBe(true);
    for (const [i, [o, n]] of ranges(bytes.length).entries()) {
      expect(before[i]!.equals(bytes.subarray(o, o + n))).toBe(true);
      expect((await read(id, o, n)).equals(before[i]!)).toBe(true);
    }
    expect((await read(id, bytes.length, 10)).length).toBe(0);
    // A process without object_store cannot read it: a 503's error, not wrong bytes.
    await expect(read(id, 0, 10, null)).rejects.toMatchObject({ code: 'OBJECT_STORE_UNAVAILABLE' });
    expect(t.s3.refused).toEqual([]);
  });

  it('a read that straddles the move goes on from the store where PostgreSQL left off', async () => {
    const bytes = randomBytes(300 * KiB);
    const id = await addArtifact(t.h, t.logs, 'out/straddle.bin', bytes);
    const release = t.s3.hold();
    const moving = move(id);
    try {
      await waitFor('the upload to be held', () => t.s3.putsWaiting === 1);
      // During the upload: from PostgreSQL.
      const first = await read(id, 0, 100 * KiB);
      expect(await isMoved(id)).toBe(false);
      release();
      expect(await moving).toBe('moved');
      const rest = await read(id, 100 * KiB, 200 * KiB);
      expect(Buffer.concat([first, rest]).equals(bytes)).toBe(true);
    } finally {
      release();
    }
  });

  it('moves once when queued twice, or after an upload nobody recorded, to one object', async () => {
    const bytes = randomBytes(50 * KiB);
    const id = await addArtifact(t.h, t.logs, 'out/twice.bin', bytes);
    // A master that died after its PUT, before its record: the object is there, unrecorded.
    await t.store.put(artifactObjectKey(t.store, id, bytes), bytes);
    const outcomes = await Promise.all([move(id), move(id)]);
    expect(outcomes.sort()).toEqual(['already', 'moved']);
    expect(await move(id)).toBe('already');
    expect([...t.s3.objects.keys()].filter((k) => k.startsWith(`ci/artifacts/${id}/`))).toHaveLength(1);
    expect((await read(id, 0, bytes.length)).equals(bytes)).toBe(true);
  });

  it('leaves in PostgreSQL an artifact still being written', async () => {
    const open = await addArtifact(t.h, t.logs, 'out/open.bin', randomBytes(KiB), { complete: false });
    await expect(move(open)).rejects.toThrow(/not complete/);
    expect(await placeOf(open)).toMatchObject({ key: null, loExists: true });
    expect(putsOf(open)).toEqual([]);
  });

  it('retention deletes the objects of artifacts past their horizon, and of replaced ones', async () => {
    const other = await Logs.open(t.h);
    const [old, replaced] = await Promise.all([
      addArtifact(t.h, other, 'out/old.bin', randomBytes(KiB)),
      addArtifact(t.h, t.logs, 'out/replaced.bin', randomBytes(KiB)),
    ]);
    expect([await move(old), await move(replaced)]).toEqual(['moved', 'moved']);
    const [oldKey, replacedKey] = [(await placeOf(old)).key!, (await placeOf(replaced)).key!];
    // A second upload to the same name replaces the first (Buildbot's FileWriter).
    await addArtifact(t.h, t.logs, 'out/replaced.bin', randomBytes(KiB));
    await t.h.db.pool.query(
      sql`UPDATE builds SET complete_at = 1, results = 0 WHERE id = (SELECT buildid FROM steps WHERE id = ${other.stepid})`,
    );
    const run = await runRetention(t.h.db.pool, retention.parse({ artifact_horizon: 60 }), {
      store: t.store,
      now: () => 1_000_000,
    });
    expect(run.deleted.artifacts).toBeGreaterThanOrEqual(1);
    expect(run.deleted.objects).toBeGreaterThanOrEqual(2);
    expect(
      await t.h.db.pool.query(
        sql`SELECT id FROM flotilla.artifacts WHERE id = ANY(${[old, replaced]}::int[])`,
      ),
    ).toEqual([]);
    expect(t.s3.objects.has(oldKey)).toBe(false);
    expect(t.s3.objects.has(replacedKey)).toBe(false);
    expect(await t.h.db.pool.query(sql`SELECT key FROM flotilla.object_garbage`)).toEqual([]);
  });
});
