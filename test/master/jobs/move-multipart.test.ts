// Logs and artifacts larger than one part move too, as S3 multipart uploads (services/core/
// objstore/streamed-put.ts), against real PostgreSQL and the tests' S3 server (which enforces
// the multipart protocol: 5 MiB parts but the last, ETags, NoSuchUpload). With 5 MiB parts, a
// 5 MiB-and-a-bit artifact and a log of over 5 MiB stored move in two parts each (as small as
// a multipart upload gets: the suite's time), and the API
// answers them byte for byte as it did from PostgreSQL. A part the store refuses aborts the
// upload: no object, no upload left open, the source still in PostgreSQL, and the retry moves
// it. A master killed mid-upload (a process of its own, SIGKILL while a part is held) leaves
// no object, the artifact reading from PostgreSQL, and another master, handed the job, aborts
// the dead one's upload and moves it; the same with the upload named in a job run in-process.
import { randomBytes } from 'node:crypto';
import type { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { masterConfigSchema } from '../../../services/core/config/master-config.js';
import { addLog, appendLog, finishLog } from '../../../services/core/data/logs.js';
import { sql } from '../../../services/core/db/pool.js';
import { MIN_PART_BYTES } from '../../../services/core/objstore/streamed-put.js';
import { type MoveArtifactData, moveArtifactProcessor } from '../../../services/master/jobs/move-artifact.js';
import { type MoveLogData, moveLogProcessor } from '../../../services/master/jobs/move-log.js';
import { apiInProcess, type InProcessApi } from '../../helpers/api.js';
import {
  addArtifact,
  JobsUnderTest,
  quiet,
  startHandedMaster,
  startMoveChild,
  storeJobsSuite,
  waitFor,
} from './helpers.js';

const t = storeJobsSuite('move-multipart-test', 'mp/');
const MiB = 1024 * 1024;
const PART = MIN_PART_BYTES;

let api: InProcessApi;
beforeAll(async () => {
  // Nothing kept between reads: every answer comes from PostgreSQL or the store.
  const www = masterConfigSchema.shape.www.parse({
    page_cache: { enabled: false },
    raw_log_cache: { enabled: false },
  });
  api = await apiInProcess({ db: { pool: t.h.db.pool }, www, objectStore: t.store });
});
afterAll(async () => {
  await api?.stop();
});

/** A job as BullMQ hands it over: its data, which updateData replaces. */
function jobOf<D>(data: D, id: string): Job<D> {
  const job = {
    data,
    id,
    updateData: async (next: D) => {
      job.data = next;
    },
  };
  return job as unknown as Job<D>;
}

const moveArtifact = (job: Job<MoveArtifactData>) =>
  moveArtifactProcessor(t.h.ctx, t.store, quiet, { partBytes: PART })(job);
const moveLog = (logid: number) =>
  moveLogProcessor(t.h.ctx, t.store, quiet, () => {}, PART)(jobOf<MoveLogData>({ logid }, `move-${logid}`));

const get = async (url: string) => {
  const res = await api.app.inject({ method: 'GET', url });
  return { status: res.statusCode, etag: res.headers.etag, body: res.rawPayload };
};
const objectKeyOf = async (id: number): Promise<string | null> =>
  (
    (await t.h.db.pool.query(sql`SELECT object_key AS key FROM flotilla.artifacts WHERE id = ${id}`)) as {
      key: string | null;
    }[]
  )[0]!.key;
const objectsUnder = (prefix: string) => [...t.s3.objects.keys()].filter((k) => k.startsWith(prefix));
const partsOf = (prefix: string) =>
  t.s3.requests.filter(
    (r) => r.method === 'PUT' && r.key.startsWith(prefix) && r.query?.includes('partNumber='),
  );

describe('moves larger than one part', () => {
  it('an artifact of over 5 MiB moves in two parts and downloads byte for byte', async () => {
    const bytes = randomBytes(5 * MiB + 4321);
    const id = await addArtifact(t.h, t.logs, 'out/large.bin', bytes);
    const before = await get(`/api/v2/artifacts/${id}/raw`);
    expect(before.body.equals(bytes)).toBe(true);
    expect(await moveArtifact(jobOf<MoveArtifactData>({ id }, `move-artifact-${id}`))).toBe('moved');
    const key = (await objectKeyOf(id))!;
    expect(key).toMatch(new RegExp(`^mp/artifacts/${id}/[0-9a-f]{16}$`));
    expect(partsOf(`mp/artifacts/${id}/`)).toHaveLength(2);
    // Assembled by Complete: S3's multipart ETag, and the bytes.
    expect(t.s3.etags.get(key)).toMatch(/^"[0-9a-f]{32}-2"$/);
    expect(t.s3.objects.get(key)!.equals(bytes)).toBe(true);
    const after = await get(`/api/v2/artifacts/${id}/raw`);
    expect(after.status).toBe(200);
    expect(after.etag).toBe(before.etag);
    expect(after.body.equals(bytes)).toBe(true);
    expect(t.s3.uploads.size).toBe(0);
    expect(t.s3.refused).toEqual([]);
  });

  it('a log of over 5 MiB stored moves in parts and reads byte for byte', async () => {
    // Lines of random base64: about 3/4 of their size once gzipped, so over one 5 MiB part.
    const logid = await t.h.run((tx) => addLog(tx, t.logs.stepid, 'large', 's'));
    const LINES_PER_APPEND = 1000;
    for (let i = 0; i < 8; i++) {
      const text = Array.from(
        { length: LINES_PER_APPEND },
        (_, j) => `${i * LINES_PER_APPEND + j} ${randomBytes(750).toString('base64')}`,
      ).join('\n');
      await t.h.run((tx) => appendLog(tx, logid, `${text}\n`));
    }
    await t.h.run((tx) => finishLog(tx, logid));
    const urls = [
      `/api/v2/logs/${logid}/raw`,
      `/api/v2/logs/${logid}/contents?offset=0&limit=3`,
      `/api/v2/logs/${logid}/contents?offset=3990&limit=30`,
      `/api/v2/logs/${logid}/contents?offset=7998&limit=5`,
    ];
    const before = await Promise.all(urls.map(get));
    expect(before.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(await moveLog(logid)).toBe('moved');
    const [row] = (await t.h.db.pool.query(
      sql`SELECT key, bytes::float8 AS bytes FROM flotilla.log_objects WHERE logid = ${logid}`,
    )) as { key: string; bytes: number }[];
    expect(row!.bytes).toBeGreaterThan(PART);
    expect(t.s3.objects.get(row!.key)!.length).toBe(row!.bytes);
    expect(partsOf(`mp/logs/${logid}/`)).toHaveLength(2);
    expect(await t.logs.rows(logid)).toEqual([]);
    for (const [i, url] of urls.entries()) {
      const after = await get(url);
      expect(after.status, url).toBe(200);
      expect(after.body.equals(before[i]!.body), url).toBe(true);
    }
    expect(t.s3.uploads.size).toBe(0);
  });

  it('a part the store refuses aborts the upload; the artifact stays in PostgreSQL; the retry moves it', async () => {
    const bytes = randomBytes(6 * MiB);
    const id = await addArtifact(t.h, t.logs, 'out/refused.bin', bytes);
    const job = jobOf<MoveArtifactData>({ id }, `move-artifact-${id}`);
    t.s3.refusePart = (n) => n === 2;
    try {
      await expect(moveArtifact(job)).rejects.toMatchObject({ code: 'OBJECT_STORE_UNAVAILABLE' });
    } finally {
      t.s3.refusePart = null;
    }
    expect(t.s3.uploads.size).toBe(0);
    expect(objectsUnder(`mp/artifacts/${id}/`)).toEqual([]);
    expect(await objectKeyOf(id)).toBeNull();
    expect((await get(`/api/v2/artifacts/${id}/raw`)).body.equals(bytes)).toBe(true);
    // The job's retry: it moves.
    expect(await moveArtifact(job)).toBe('moved');
    expect((await get(`/api/v2/artifacts/${id}/raw`)).body.equals(bytes)).toBe(true);
    expect(t.s3.uploads.size).toBe(0);
  });

  it("a dead master's open upload shows nothing; the job's next run aborts it and moves", async () => {
    const bytes = randomBytes(6 * MiB);
    const id = await addArtifact(t.h, t.logs, 'out/dead.bin', bytes);
    // What a master killed after its first part leaves: an open upload, named in its job.
    const job = jobOf<MoveArtifactData>({ id }, `move-artifact-${id}`);
    const deadKey = t.store.key(`artifacts/${id}/0000000000000000`);
    const uploadId = await t.store.createMultipartUpload(deadKey);
    await job.updateData({ id, upload: { key: deadKey, uploadId } });
    await t.store.uploadPart(deadKey, uploadId, 1, bytes.subarray(0, PART));
    expect(objectsUnder(`mp/artifacts/${id}/`)).toEqual([]);
    expect((await get(`/api/v2/artifacts/${id}/raw`)).body.equals(bytes)).toBe(true);
    expect(await moveArtifact(job)).toBe('moved');
    expect(t.s3.uploads.has(uploadId)).toBe(false);
    expect(t.s3.uploads.size).toBe(0);
    expect(objectsUnder(`mp/artifacts/${id}/`)).toEqual([(await objectKeyOf(id))!]);
    expect((await get(`/api/v2/artifacts/${id}/raw`)).body.equals(bytes)).toBe(true);
  });

  it('a master killed mid-upload leaves no object; the master handed its job aborts its upload and moves', async () => {
    const killedSuite = new JobsUnderTest(t.h);
    const bytes = randomBytes(6 * MiB);
    const id = await addArtifact(t.h, t.logs, 'out/killed.bin', bytes);
    const uploadsOf = () => [...t.s3.uploads.values()].filter((u) => u.key.startsWith(`artifacts/${id}/`));
    const release = t.s3.hold();
    const child = startMoveChild(t, killedSuite, t.s3.bucket, {
      JOBS_ARTIFACT_ID: String(id),
      JOBS_PART_BYTES: String(PART),
    });
    try {
      await waitFor('the child to be uploading its first part', () => t.s3.putsWaiting === 1, {
        proc: child,
      });
      await child.stop('SIGKILL', 0);
      // The part had arrived: the store keeps it, in an upload nobody will complete.
      release();
      await waitFor("the dead master's part to be stored", () => uploadsOf()[0]?.parts.size === 1);
      expect(objectsUnder(`artifacts/${id}/`)).toEqual([]);
      expect(await objectKeyOf(id)).toBeNull();
      expect((await get(`/api/v2/artifacts/${id}/raw`)).body.equals(bytes)).toBe(true);
      // Another master: the job comes to it once the dead one's lock lapses.
      await startHandedMaster(t, killedSuite, { movePartBytes: PART });
      await waitFor('the artifact to move', async () => (await objectKeyOf(id)) !== null);
      expect(uploadsOf()).toEqual([]);
      expect(objectsUnder(`artifacts/${id}/`)).toEqual([(await objectKeyOf(id))!]);
      expect((await get(`/api/v2/artifacts/${id}/raw`)).body.equals(bytes)).toBe(true);
    } finally {
      release();
      await child.stop('SIGKILL', 0);
      await killedSuite.closeAll();
    }
  });

  it('refuses a part size under S3 minimum', async () => {
    const id = await addArtifact(t.h, t.logs, 'out/small-parts.bin', randomBytes(1000));
    const tiny = moveArtifactProcessor(t.h.ctx, t.store, quiet, { partBytes: MiB });
    await expect(tiny(jobOf<MoveArtifactData>({ id }, `move-artifact-${id}`))).rejects.toThrow(/at least/);
  });
});
