// Run by move-log.test.ts and move-multipart.test.ts as a master of its own, to be killed
// mid-move: it starts the jobs with the test's object store (and part size, JOBS_PART_BYTES),
// queues the move of one log (JOBS_LOGID) or artifact (JOBS_ARTIFACT_ID), says so, and runs
// until killed.
import { Redis } from 'ioredis';
import { createPool } from '../../../services/core/db/pool.js';
import { ObjectStore } from '../../../services/core/objstore/client.js';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import { startJobs } from '../../../services/master/jobs/index.js';
import { TEST_S3_CREDENTIALS } from '../../helpers/s3-server.js';

const env = (name: string) => process.env[name]!;
const redisUrl = env('JOBS_REDIS_URL');
const db = createPool(env('JOBS_DATABASE_URL'), { poolSize: 2 });
const jobs = await startJobs({
  ctx: { db, redis: new Redis(redisUrl) },
  redis: redisUrl,
  masterid: () => Number(env('JOBS_MASTERID')),
  expirySeconds: 600,
  expirePeriodMs: 3_600_000,
  codec: 'gzip',
  log: createLogger('move-log-child', 'silent'),
  prefix: env('JOBS_PREFIX'),
  lockDurationMs: Number(env('JOBS_LOCK_MS')),
  ...(process.env.JOBS_PART_BYTES ? { movePartBytes: Number(env('JOBS_PART_BYTES')) } : {}),
  objectStore: new ObjectStore({
    endpoint: env('JOBS_S3_ENDPOINT'),
    bucket: env('JOBS_S3_BUCKET'),
    region: 'us-east-1',
    prefix: '',
    pathStyle: true,
    credentials: TEST_S3_CREDENTIALS,
  }),
});
if (process.env.JOBS_ARTIFACT_ID) jobs.queueMoveArtifactSoon(Number(env('JOBS_ARTIFACT_ID')));
else await jobs.queueMoveLog(Number(env('JOBS_LOGID')));
process.stdout.write('queued\n');
