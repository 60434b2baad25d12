// move-log through real BullMQ, PostgreSQL, Redis and the tests' S3 server (which checks
// every signature): a finished log leaves PostgreSQL for one object and an index, every range
// reading the same from the object as from the rows; compress-log queues it; queued twice it
// moves once; a log still open stays (larger logs, in parts: move-multipart.test.ts); a
// master killed mid-upload has its job handed to another master, which moves the log exactly
// once, to one object; retention deletes the objects of logs past their horizon and of
// builds deleted whole.
import { describe, expect, it } from 'vitest';
import { retention } from '../../../services/core/config/master-config/retention.js';
import { sql } from '../../../services/core/db/pool.js';
import { type IndexedChunk, rowsOfSpan, spanOf } from '../../../services/core/logs/log-object.js';
import { QUEUES } from '../../../services/master/jobs/index.js';
import { moveLogJobId } from '../../../services/master/jobs/move-log.js';
import { runRetention } from '../../../services/master/jobs/retention.js';
import {
  JobsUnderTest,
  Logs,
  startHandedMaster,
  startMoveChild,
  storeJobsSuite,
  waitFor,
} from './helpers.js';

const BUCKET = 'move-log-test';
const t = storeJobsSuite(BUCKET, 'ci/');

const moved = async (logid: number) =>
  (await t.h.db.pool.query(sql`SELECT key, bytes FROM flotilla.log_objects WHERE logid = ${logid}`)) as {
    key: string;
    bytes: number;
  }[];

/** Lines first..last of a moved log, read from its object through its index. */
async function objectText(logid: number, first: number, last: number): Promise<string> {
  const { key } = (await moved(logid))[0]!;
  const index = (await t.h.db.pool.query(sql`
    SELECT first_line, last_line, compressed, byte_offset::float8 AS byte_offset, byte_length
    FROM flotilla.log_object_chunks WHERE logid = ${logid} AND last_line >= ${first} AND first_line <= ${last}
    ORDER BY first_line`)) as IndexedChunk[];
  const span = spanOf(index)!;
  return Logs.text(rowsOfSpan(index, await t.store.get(key, span)), first, last);
}

const jobState = async (logid: number) =>
  (await (await t.suite.queue(QUEUES.moveLog).getJob(moveLogJobId(logid)))?.getState()) ?? 'none';

describe('move-log', () => {
  it('moves a compressed log to one object; every range reads the same from it', async () => {
    const n = 2600;
    const logid = await t.logs.write('to move', n);
    const rows = await t.logs.rows(logid);
    const expected = Logs.readRanges(rows, n);
    // As a finished log goes: compressed, then moved.
    t.jobs.queueCompressLogSoon(logid);
    await waitFor('the log to move', async () => (await moved(logid)).length === 1);
    expect(await t.logs.rows(logid)).toEqual([]);
    const [{ key, bytes }] = (await moved(logid)) as [{ key: string; bytes: number }];
    expect(key).toMatch(new RegExp(`^ci/logs/${logid}/[0-9a-f]{16}$`));
    expect(t.s3.objects.get(key)?.length).toBe(Number(bytes));
    for (const [i, [a, b]] of Logs.ranges(n).entries())
      expect(await objectText(logid, a, b)).toBe(expected[i]);
    // Compressed: far smaller than the text.
    expect(Number(bytes)).toBeLessThan(expected[0]!.length / 4);
    expect(t.s3.refused).toEqual([]);
  });

  it('compresses the object even when the master stores chunks uncompressed', async () => {
    const raw = await t.suite.start({
      masterid: () => t.logs.masterid,
      expirePeriodMs: 3_600_000,
      codec: 'none',
      objectStore: t.store,
    });
    const logid = await t.logs.write('raw', 1200, { per: 50 });
    const text = Logs.text(await t.logs.rows(logid), 0, 1199);
    raw.queueCompressLogSoon(logid);
    await waitFor('the log to move', async () => (await moved(logid)).length === 1);
    const index = (await t.h.db.pool.query(
      sql`SELECT compressed FROM flotilla.log_object_chunks WHERE logid = ${logid}`,
    )) as { compressed: number }[];
    expect(index.every((c) => c.compressed === 1)).toBe(true);
    expect(await objectText(logid, 0, 1199)).toBe(text);
    await raw.stop();
  });

  it('moves once when queued twice, and leaves one object', async () => {
    const logid = await t.logs.write('twice', 900);
    await Promise.all([t.jobs.queueMoveLog(logid), t.jobs.queueMoveLog(logid)]);
    await waitFor('the job to complete', async () => (await jobState(logid)) === 'completed');
    await t.jobs.queueMoveLog(logid);
    expect(await moved(logid)).toHaveLength(1);
    expect([...t.s3.objects.keys()].filter((k) => k.startsWith(`ci/logs/${logid}/`))).toHaveLength(1);
  });

  it('leaves a log that is still open in PostgreSQL', async () => {
    const logid = await t.logs.write('open', 300, { finish: false });
    await t.jobs.queueMoveLog(logid);
    await waitFor('an attempt to fail', async () => {
      const job = await t.suite.queue(QUEUES.moveLog).getJob(moveLogJobId(logid));
      return (job?.attemptsMade ?? 0) >= 1;
    });
    expect(await moved(logid)).toEqual([]);
    expect((await t.logs.rows(logid)).length).toBeGreaterThan(0);
  });

  it('retention deletes the objects of logs past their horizon, and of builds deleted whole', async () => {
    const finishBuild = (l: Logs) =>
      t.h.db.pool.query(
        sql`UPDATE builds SET complete_at = 1, results = 0 WHERE id = (SELECT buildid FROM steps WHERE id = ${l.stepid})`,
      );
    const keyOf = async (logid: number) => (await moved(logid))[0]!.key;
    const [a, b] = [await Logs.open(t.h), await Logs.open(t.h)];
    const [logA, logB] = [await a.write('past its horizon', 200), await b.write('build deleted', 200)];
    await Promise.all([t.jobs.queueMoveLog(logA), t.jobs.queueMoveLog(logB)]);
    await waitFor(
      'both logs to move',
      async () => (await moved(logA)).length + (await moved(logB)).length === 2,
    );
    const [keyA, keyB] = [await keyOf(logA), await keyOf(logB)];
    await finishBuild(a);
    const now = () => 1_000_000;
    const logsOnly = await runRetention(t.h.db.pool, retention.parse({ logHorizon: 60 }), {
      store: t.store,
      now,
    });
    expect(logsOnly.deleted.objects).toBeGreaterThanOrEqual(1);
    expect(t.s3.objects.has(keyA)).toBe(false);
    expect(await moved(logA)).toEqual([]);
    const [typeA] = (await t.h.db.pool.query(sql`SELECT type FROM logs WHERE id = ${logA}`)) as {
      type: string;
    }[];
    expect(typeA!.type).toBe('d');
    // The other build is not finished: its log and object stay.
    expect(t.s3.objects.has(keyB)).toBe(true);

    await finishBuild(b);
    await runRetention(t.h.db.pool, retention.parse({ build_horizon: 60 }), { store: t.store, now });
    expect(await t.h.db.pool.query(sql`SELECT id FROM logs WHERE id = ${logB}`)).toEqual([]);
    expect(t.s3.objects.has(keyB)).toBe(false);
    expect(await t.h.db.pool.query(sql`SELECT key FROM flotilla.object_garbage`)).toEqual([]);
  });

  it('a master killed mid-upload: another master moves the log exactly once, to one object', async () => {
    const killedSuite = new JobsUnderTest(t.h);
    const logid = await t.logs.write('killed mid-move', 3000);
    const text = Logs.text(await t.logs.rows(logid), 0, 2999);
    const release = t.s3.hold();
    const child = startMoveChild(t, killedSuite, BUCKET, { JOBS_LOGID: String(logid) });
    try {
      await waitFor('the child to be uploading', () => t.s3.putsWaiting === 1, { proc: child });
      await child.stop('SIGKILL', 0);
      // The body had arrived: the store keeps it, though no master recorded it.
      release();
      await waitFor("the dead master's object to be stored", () =>
        [...t.s3.objects.keys()].some((k) => k.startsWith(`logs/${logid}/`)),
      );
      expect(await moved(logid)).toEqual([]);
      expect((await t.logs.rows(logid)).length).toBeGreaterThan(0);
      // Another master: the job comes to it once the dead one's lock lapses.
      await startHandedMaster(t, killedSuite);
      await waitFor('the log to move', async () => (await moved(logid)).length === 1);
      expect(await moved(logid)).toHaveLength(1);
      expect(await t.logs.rows(logid)).toEqual([]);
      expect([...t.s3.objects.keys()].filter((k) => k.startsWith(`logs/${logid}/`))).toHaveLength(1);
      const puts = t.s3.requests.filter((r) => r.method === 'PUT' && r.key.startsWith(`logs/${logid}/`));
      expect(puts).toHaveLength(2);
      expect(await objectText(logid, 0, 2999)).toBe(text);
    } finally {
      release();
      await child.stop('SIGKILL', 0);
      await killedSuite.closeAll();
    }
  });
});
