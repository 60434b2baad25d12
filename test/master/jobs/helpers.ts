// What the jobs suites share: startJobs on a queue prefix of the suite's own (the queues live
// in the one test Redis), reading a sample out of /metrics, and
// removing a prefix's queues afterwards; logs of many small chunks, and reading them back.
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { afterAll, beforeAll } from 'vitest';
import { appendArtifact, completeArtifact, newArtifact } from '../../../services/core/data/artifacts.js';
import { newBuild } from '../../../services/core/data/builds.js';
import { addLog, appendLog, finishLog } from '../../../services/core/data/logs.js';
import { newStep } from '../../../services/core/data/steps.js';
import { sql } from '../../../services/core/db/pool.js';
import { readLogLines } from '../../../services/core/logs/lines.js';
import type { LogChunkRow } from '../../../services/core/logs/types.js';
import type { ObjectStore } from '../../../services/core/objstore/client.js';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import { type Jobs, type JobsOptions, QUEUES, startJobs } from '../../../services/master/jobs/index.js';
import { buildParts, type Harness, openHarness } from '../../core/data/harness.js';
import { testEnv } from '../../helpers/env.js';
import { type Running, start } from '../../helpers/processes.js';
import { sample } from '../../helpers/prometheus.js';
import { S3Server } from '../../helpers/s3-server.js';
import { waitFor } from '../../helpers/wait.js';

export const quiet = createLogger('test-jobs', 'silent');

export const newPrefix = (): string => `test:jobs:${randomBytes(6).toString('hex')}`;

/** startJobs with test defaults; every instance is stopped and its queues removed by `closeAll`. */
export class JobsUnderTest {
  private readonly started: Jobs[] = [];
  constructor(
    readonly h: Harness,
    readonly prefix = newPrefix(),
  ) {}

  async start(options: Partial<JobsOptions> & { masterid: () => number }): Promise<Jobs> {
    const jobs = await startJobs({
      ctx: this.h.ctx,
      redis: testEnv().redisUrl,
      expirySeconds: 600,
      codec: 'gzip',
      log: quiet,
      prefix: this.prefix,
      compressRetry: { attempts: 4, backoffMs: 100 },
      ...options,
    });
    this.started.push(jobs);
    return jobs;
  }

  /** Every instance started, stopped or not. */
  all(): readonly Jobs[] {
    return this.started;
  }

  private readonly queues = new Map<string, Queue>();

  /** Attempts of `queue` that completed, over every instance this suite started. */
  async completed(queue: string): Promise<number> {
    let total = 0;
    for (const jobs of this.started) {
      const text = await jobs.registry.getSingleMetricAsString('flotilla_jobs_duration_seconds');
      total += sample(text, 'flotilla_jobs_duration_seconds_count', { queue, outcome: 'completed' }) ?? 0;
    }
    return total;
  }

  /** A plain BullMQ queue on the same prefix, to look at or steer from the test. */
  queue(name: string): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: { url: testEnv().redisUrl }, prefix: this.prefix });
      this.queues.set(name, q);
    }
    return q;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.started.map((j) => j.stop()));
    for (const name of Object.values(QUEUES)) await this.queue(name).obliterate({ force: true });
    await Promise.all([...this.queues.values()].map((q) => q.close()));
  }
}

/** A harness and a JobsUnderTest opened before the suite's tests and closed after them. */
export function jobsSuite(): { readonly h: Harness; readonly jobs: JobsUnderTest } {
  const opened: { h?: Harness; jobs?: JobsUnderTest } = {};
  beforeAll(async () => {
    opened.h = await openHarness();
    opened.jobs = new JobsUnderTest(opened.h);
  });
  afterAll(async () => {
    await opened.jobs?.closeAll();
    await opened.h?.close();
  });
  return {
    get h() {
      return opened.h!;
    },
    get jobs() {
      return opened.jobs!;
    },
  };
}

/** What a suite of moves to the object store shares, filled in before its tests. */
export interface StoreJobsSuite {
  h: Harness;
  logs: Logs;
  s3: S3Server;
  store: ObjectStore;
  suite: JobsUnderTest;
  jobs: Jobs;
}

/** A harness, the tests' S3 server, and jobs moving to it, opened before the suite and closed after. */
export function storeJobsSuite(bucket: string, prefix: string): StoreJobsSuite {
  const o = {} as StoreJobsSuite;
  beforeAll(async () => {
    [o.h, o.s3] = await Promise.all([openHarness(), S3Server.start({ bucket })]);
    o.logs = await Logs.open(o.h);
    o.store = o.s3.client(prefix);
    o.suite = new JobsUnderTest(o.h);
    o.jobs = await o.suite.start({
      masterid: () => o.logs.masterid,
      expirePeriodMs: 3_600_000,
      objectStore: o.store,
      moveRetry: { attempts: 4, backoffMs: 100 },
    });
    // The backfill sweep runs once at once when scheduled (BullMQ's `every`), then a period
    // later: a test that adds a log or an artifact and moves it by hand waits for that first run
    // to end, or the sweep may read the new row and move it first (a CI run: "an artifact of
    // over 5 MiB" found it moved already).
    await waitFor(
      'the first backfill sweep to end',
      async () => (await o.suite.completed(QUEUES.objectBackfill)) >= 1,
    );
  });
  afterAll(async () => {
    await o.suite?.closeAll();
    await o.s3?.close();
    await o.h?.close();
  });
  return o;
}

/**
 * How long the master killed mid-move holds its job: its lock lapses this long after the kill.
 * Not less: with 1 s, the child (a tsx process) lost its own hold under the suite's load (load
 * 13-20 on a slow machine, 2026-11-29), so its job was stalled once before the kill and failed
 * for good at the second, and the handed master never got it (two CI runs in a row; alone the
 * test passed in 5 s).
 */
const KILLED_LOCK_MS = 5000;
// The master handed the job holds it longer, so that its own lock survives a busy machine's
// pauses (with 1 s, a pause of a second under load lost it, BullMQ failed the job as stalled
// twice, and the test waited for a move that never came); it still looks for lapsed locks every
// KILLED_LOCK_MS, so the dead one's job comes to it soon after its lock lapsed, where a look
// every hold's period (BullMQ's default) cost the test up to two of them.
const HANDED_LOCK_MS = 20_000;

/**
 * A master in its own process (move-log-child.ts) that queues one move to the suite's store
 * and runs it, to be killed mid-upload; `move` names what it moves (JOBS_LOGID or
 * JOBS_ARTIFACT_ID, and JOBS_PART_BYTES).
 */
export function startMoveChild(
  t: StoreJobsSuite,
  killed: JobsUnderTest,
  bucket: string,
  move: Record<string, string>,
): Running {
  return start(process.execPath, ['--import', 'tsx', 'test/master/jobs/move-log-child.ts'], {
    JOBS_DATABASE_URL: t.h.db.url,
    JOBS_REDIS_URL: testEnv().redisUrl,
    JOBS_PREFIX: killed.prefix,
    JOBS_MASTERID: String(t.logs.masterid),
    JOBS_LOCK_MS: String(KILLED_LOCK_MS),
    JOBS_S3_ENDPOINT: t.s3.endpoint,
    JOBS_S3_BUCKET: bucket,
    ...move,
  });
}

/** The master the killed one's job is handed to, on the same queues (`killed`). */
export function startHandedMaster(
  t: StoreJobsSuite,
  killed: JobsUnderTest,
  options: Partial<JobsOptions> = {},
): Promise<Jobs> {
  return killed.start({
    masterid: () => t.logs.masterid,
    expirePeriodMs: 3_600_000,
    objectStore: t.s3.client(),
    lockDurationMs: HANDED_LOCK_MS,
    stalledIntervalMs: KILLED_LOCK_MS,
    ...options,
  });
}

export { sample } from '../../helpers/prometheus.js';
export { waitFor } from '../../helpers/wait.js';

/**
 * Logs on one step of one build, written a few lines per append (so in many small chunks).
 * The build's master is the one to run the jobs as: any other silent master's build would be
 * ended, its logs finished, by the expire-masters run every startJobs does at once.
 */
export class Logs {
  private constructor(
    private readonly h: Harness,
    readonly stepid: number,
    readonly masterid: number,
  ) {}

  static async open(h: Harness): Promise<Logs> {
    const { stepid, masterid } = await h.run(async (tx) => {
      const parts = await buildParts(tx);
      const { buildid } = await newBuild(tx, { ...parts, buildrequestid: parts.brid });
      return { stepid: (await newStep(tx, buildid, 'compile')).stepid, masterid: parts.masterid };
    });
    return new Logs(h, stepid, masterid);
  }

  /** A log of `n` lines, `per` lines an append; finished unless told otherwise. */
  async write(name: string, n: number, { per = 7, finish = true } = {}): Promise<number> {
    const logid = await this.h.run((tx) => addLog(tx, this.stepid, name, 's'));
    // One append per `per` lines (a chunk each), all in one transaction: quicker, same rows.
    await this.h.run(async (tx) => {
      for (let i = 0; i < n; i += per) {
        const lines = Array.from(
          { length: Math.min(per, n - i) },
          (_, j) => `oline ${i + j} ${'x'.repeat((i + j) % 60)}`,
        );
        await appendLog(tx, logid, `${lines.join('\n')}\n`);
      }
    });
    if (finish) await this.finish(logid);
    return logid;
  }

  /**
   * Hold the log's row lock (as a writer would) until the returned function is called; a
   * compress-log job on it waits, active, meanwhile.
   */
  async hold(logid: number): Promise<() => Promise<void>> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holder = this.h.db.pool.tx(async (q) => {
      await q.query(sql`SELECT id FROM logs WHERE id = ${logid} FOR UPDATE`);
      locked();
      await released;
    });
    await Promise.race([isLocked, holder]);
    return async () => {
      release();
      await holder;
    };
  }

  finish(logid: number): Promise<boolean> {
    return this.h.run((tx) => finishLog(tx, logid));
  }

  /** Its rows, read in one statement (one snapshot), as the read API reads them. */
  async rows(logid: number): Promise<LogChunkRow[]> {
    return (await this.h.db.pool.query(sql`
      SELECT first_line, last_line, content, compressed FROM logchunks WHERE logid = ${logid}
      ORDER BY first_line`)) as LogChunkRow[];
  }

  /** Lines first..last of one read of its rows. */
  static text(rows: LogChunkRow[], first: number, last: number): string {
    return readLogLines(rows, { first_line: first, last_line: last });
  }

  /**
   * The line ranges a suite reads a log of `n` lines by, to see that a job kept every read the
   * same: the whole log, its first and its last line, and two spans across many small chunks.
   */
  static ranges(n: number): [number, number][] {
    return [
      [0, n - 1],
      [0, 0],
      [n - 1, n - 1],
      [999, 1001],
      [17, 1234],
    ];
  }

  /** Each of `ranges(n)` read from one read of its rows. */
  static readRanges(rows: LogChunkRow[], n: number): string[] {
    return Logs.ranges(n).map(([a, b]) => Logs.text(rows, a, b));
  }
}

/** A complete file artifact of the Logs' step with these bytes, written a block at a time as an upload is. */
export async function addArtifact(
  h: Harness,
  logs: Logs,
  name: string,
  bytes: Uint8Array,
  { complete = true } = {},
): Promise<number> {
  const [step] = (await h.db.pool.query(sql`SELECT buildid FROM steps WHERE id = ${logs.stepid}`)) as {
    buildid: number;
  }[];
  const id = await h.run((tx) =>
    newArtifact(tx, { buildid: step!.buildid, stepid: logs.stepid, name, kind: 'file' }),
  );
  const BLOCK = 256 * 1024;
  for (let at = 0; at < bytes.length; at += BLOCK)
    await h.run((tx) => appendArtifact(tx, id, bytes.subarray(at, at + BLOCK)));
  if (complete) await h.run((tx) => completeArtifact(tx, id));
  return id;
}
