// Run by stop.test.ts as a process of its own: start the jobs, let both queues do work, stop
// them, close the database and Redis, and then do nothing. If anything the jobs opened were
// left open, this process would never exit by itself.
import { Redis } from 'ioredis';
import { createPool } from '../../../services/core/db/pool.js';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import { QUEUES, startJobs } from '../../../services/master/jobs/index.js';
import { sample } from '../../helpers/prometheus.js';
import { waitFor } from '../../helpers/wait.js';

const databaseUrl = process.env.JOBS_DATABASE_URL!;
const redisUrl = process.env.JOBS_REDIS_URL!;
const prefix = process.env.JOBS_PREFIX!;
const logid = Number(process.env.JOBS_LOGID);
const masterid = Number(process.env.JOBS_MASTERID);

const db = createPool(databaseUrl, { poolSize: 2 });
const redis = new Redis(redisUrl);
const ctx = { db, redis };
const jobs = await startJobs({
  ctx,
  redis: redisUrl,
  masterid: () => masterid,
  expirySeconds: 600,
  codec: 'gzip',
  log: createLogger('exit-check', 'silent'),
  prefix,
  expirePeriodMs: 200,
});
await jobs.queueCompressLog(logid);
const completed = async (queue: string) =>
  sample((await jobs.metrics()).body, 'flotilla_jobs_duration_seconds_count', {
    queue,
    outcome: 'completed',
  }) ?? 0;
// Both queues at work: the log compressed, and expire-masters run at least twice.
await waitFor(
  'both queues to do work',
  async () => (await completed(QUEUES.compressLog)) >= 1 && (await completed(QUEUES.expireMasters)) >= 2,
);
const { body } = await jobs.metrics();
await jobs.stop();
await db.dispose();
await redis.quit();
process.stdout.write(`stopped\n${body}`);
