// object-backfill through real BullMQ, PostgreSQL, Redis and the tests' S3 server: logs and
// artifacts that finished while the masters had no object store move once jobs start with one,
// and once a real master starts with object_store in its configuration (a restart-only key),
// and read byte for byte the same through the API; a log
// whose move job failed as stalled (its masters killed twice mid-move) is moved by the sweep;
// an open log and an artifact still being written stay; the sweep never has more moves in a
// queue than its bound.
import { randomBytes } from 'node:crypto';
import { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { masterConfigSchema } from '../../../services/core/config/master-config.js';
import { sql } from '../../../services/core/db/pool.js';
import type { ObjectStore } from '../../../services/core/objstore/client.js';
import { QUEUES } from '../../../services/master/jobs/index.js';
import { queueMoveArtifact } from '../../../services/master/jobs/move-artifact.js';
import { moveLogJobId, queueMoveLog } from '../../../services/master/jobs/move-log.js';
import { backfillTargets, runBackfill } from '../../../services/master/jobs/object-backfill.js';
import { type Harness, openHarness } from '../../core/data/harness.js';
import { apiInProcess, type InProcessApi } from '../../helpers/api.js';
import { testEnv } from '../../helpers/env.js';
import { masterYaml } from '../../helpers/master-config.js';
import { S3Server, TEST_S3_CREDENTIALS } from '../../helpers/s3-server.js';
import { Stage } from '../in-process.js';
import { addArtifact, JobsUnderTest, Logs, quiet, sample, waitFor } from './helpers.js';

let h: Harness;
let logs: Logs;
let s3: S3Server;
let store: ObjectStore;
let api: InProcessApi;
const suites: JobsUnderTest[] = [];

const www = masterConfigSchema.shape.www.parse({
  page_cache: { enabled: false },
  raw_log_cache: { enabled: false },
});

beforeAll(async () => {
  [h, s3] = await Promise.all([openHarness(), S3Server.start({ bucket: 'backfill' })]);
  logs = await Logs.open(h);
  store = s3.client('ci/');
  api = await apiInProcess({ db: { pool: h.db.pool }, www, objectStore: store });
});
afterAll(async () => {
  for (const s of suites) await s.closeAll();
  await api?.stop();
  await s3?.close();
  await h?.close();
});

const suite = () => {
  const s = new JobsUnderTest(h);
  suites.push(s);
  return s;
};

const logMoved = async (logid: number) =>
  (await h.db.pool.query(sql`SELECT 1 AS ok FROM flotilla.log_objects WHERE logid = ${logid}`)).length === 1;
const artifactMoved = async (id: number) =>
  (
    await h.db.pool.query(
      sql`SELECT 1 AS ok FROM flotilla.artifacts WHERE id = ${id} AND object_key IS NOT NULL`,
    )
  ).length === 1;

/** Everything the API answers of a log's or an artifact's bytes. */
async function readAll(logids: readonly number[], artifactids: readonly number[]): Promise<string[]> {
  const urls = [
    ...logids.flatMap((id) => [`/api/v2/logs/${id}/raw`, `/api/v2/logs/${id}/contents?offset=3&limit=40`]),
    ...artifactids.map((id) => `/api/v2/artifacts/${id}/raw`),
  ];
  return Promise.all(
    urls.map(async (url) => {
      const res = await api.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      return res.rawPayload.toString('base64');
    }),
  );
}

describe('object-backfill', () => {
  it('queues no more moves than its bound, and stops with its walk unfinished', async () => {
    // Queues no worker takes: what the sweep put in stays there.
    const idle = suite();
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await logs.write(`bounded ${i}`, 30));
    const [moveLogs, moveArtifacts] = [idle.queue(QUEUES.moveLog), idle.queue(QUEUES.moveArtifact)];
    const run = await runBackfill(
      h.db.pool,
      backfillTargets({
        logs: { queue: moveLogs, add: (id) => queueMoveLog(moveLogs, id) },
        artifacts: { queue: moveArtifacts, add: (id) => queueMoveArtifact(moveArtifacts, id) },
      }),
      // The run ends when its time is up, waiting for room the idle queues never give back;
      // 300 ms was once too short for a loaded machine to queue the first three (a CI run
      // of 2026-11-29 queued 2): the time must only end the wait, never the walk.
      { settings: { batch: 2, inFlight: 3, budgetMs: 2000 }, log: quiet },
    );
    expect(run.finished).toBe(false);
    expect(run.queued.logs).toBe(3);
    expect(await moveLogs.getWaitingCount()).toBe(3);
    // The first three in id order, each once.
    const waiting = (await moveLogs.getWaiting()).map((j) => j.data.logid as number).sort((a, b) => a - b);
    expect(waiting).toEqual(ids.slice(0, 3));
  });

  it('moves what finished before a store was configured, and a move failed as stalled', async () => {
    // A cluster without a store: logs finish and are compressed, artifacts complete; all stay.
    const before = suite();
    const storeless = await before.start({ masterid: () => logs.masterid, expirePeriodMs: 3_600_000 });
    const finished = [await logs.write('old a', 400), await logs.write('old b', 1200, { per: 40 })];
    for (const logid of finished) await storeless.queueCompressLog(logid);
    await waitFor('the logs to be compressed', async () => (await before.completed(QUEUES.compressLog)) >= 2);
    const open = await logs.write('still open', 50, { finish: false });
    const artifacts = [
      await addArtifact(h, logs, 'out/a.bin', randomBytes(300 * 1024)),
      await addArtifact(h, logs, 'out/b.bin', randomBytes(1024)),
    ];
    const writing = await addArtifact(h, logs, 'out/writing.bin', randomBytes(1024), { complete: false });

    // A log whose move job BullMQ failed as stalled: its master was killed mid-move once too
    // often. Taken and failed here as BullMQ's stalled check fails it, with no attempts left.
    const stalled = await logs.write('stalled', 300);
    const moves = before.queue(QUEUES.moveLog);
    await moves.add('move-log', { logid: stalled }, { jobId: moveLogJobId(stalled), attempts: 1 });
    const taker = new Worker(QUEUES.moveLog, null, {
      connection: { url: testEnv().redisUrl },
      prefix: before.prefix,
      autorun: false,
    });
    try {
      const job = await taker.getNextJob('killed-master');
      expect(job?.id).toBe(moveLogJobId(stalled));
      await job!.moveToFailed(new Error('job stalled more than allowable limit'), 'killed-master');
    } finally {
      await taker.close();
    }
    expect(await (await moves.getJob(moveLogJobId(stalled)))?.getState()).toBe('failed');
    await storeless.stop();

    const toMove = [...finished, stalled];
    const answers = await readAll(toMove, artifacts);

    // A master starts with a store (on the same queues): its sweep finds them all.
    const jobs = await before.start({
      masterid: () => logs.masterid,
      expirePeriodMs: 3_600_000,
      objectStore: store,
      moveRetry: { attempts: 4, backoffMs: 100 },
      backfill: { periodMs: 250, batch: 2, inFlight: 2 },
    });
    await waitFor('every log and artifact to move', async () => {
      for (const id of toMove) if (!(await logMoved(id))) return false;
      for (const id of artifacts) if (!(await artifactMoved(id))) return false;
      return true;
    });
    expect(await readAll(toMove, artifacts)).toEqual(answers);
    for (const id of toMove) expect(await logs.rows(id)).toEqual([]);
    // Nothing left: the next sweep says so.
    await waitFor('the sweep to find nothing left', async () => {
      const text = await jobs.registry.getSingleMetricAsString('flotilla_object_backfill_remaining');
      return (
        sample(text, 'flotilla_object_backfill_remaining', { kind: 'logs' }) === 0 &&
        sample(text, 'flotilla_object_backfill_remaining', { kind: 'artifacts' }) === 0
      );
    });
    // What is not finished stays in PostgreSQL, untouched.
    expect(await logMoved(open)).toBe(false);
    expect((await logs.rows(open)).length).toBeGreaterThan(0);
    expect(await artifactMoved(writing)).toBe(false);
    expect(s3.refused).toEqual([]);
    await jobs.stop();
  });

  it('a master started with object_store moves what finished before, at its start', async () => {
    const finished = [await logs.write('before the store', 700)];
    const artifacts = [await addArtifact(h, logs, 'out/before.bin', randomBytes(64 * 1024))];
    const answers = await readAll(finished, artifacts);
    // Its own Redis (so its queues are nobody else's), on this suite's database.
    const stage = await Stage.open();
    try {
      const yaml = masterYaml({
        object_store: {
          endpoint: s3.endpoint,
          bucket: 'backfill',
          prefix: 'ci/',
          access_key_id_env: 'KEY_ID',
          secret_access_key_env: 'SECRET',
        },
      });
      const env = { KEY_ID: TEST_S3_CREDENTIALS.accessKeyId, SECRET: TEST_S3_CREDENTIALS.secretAccessKey };
      await stage.master('with-store', yaml, { db: h.db.pool, env });
      // Its sweep's first run comes at once (BullMQ runs an `every` schedule's first job at once).
      await waitFor('the log and the artifact to move', async () => {
        for (const id of finished) if (!(await logMoved(id))) return false;
        for (const id of artifacts) if (!(await artifactMoved(id))) return false;
        return true;
      });
      expect(await readAll(finished, artifacts)).toEqual(answers);
    } finally {
      await stage.close();
    }
  });
});
