// A master's move of one artifact, alone in its process so that its resident memory is the
// move's: move-artifact's own processor (services/master/jobs/move-artifact.ts) with the
// part size it is given, the store in another process. Prints one JSON line: the outcome,
// the RSS before the move, the highest RSS sampled during it (every 20 ms) and the process's
// peak RSS (getrusage), in MiB.
import type { Job } from 'bullmq';
import { createPool } from '../../../services/core/db/pool.js';
import { ObjectStore } from '../../../services/core/objstore/client.js';
import { createRedis } from '../../../services/core/redis.js';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import { type MoveArtifactData, moveArtifactProcessor } from '../../../services/master/jobs/move-artifact.js';
import { TEST_S3_CREDENTIALS } from '../../../test/helpers/s3-server.js';

const MiB = 1024 * 1024;
const env = (name: string) => process.env[name]!;
const db = createPool(env('DATABASE_URL'), { poolSize: 2 });
const redis = createRedis(env('REDIS_URL'), 'bench-move-rss');
const store = new ObjectStore({
  endpoint: env('S3_ENDPOINT'),
  bucket: 'bench',
  region: 'us-east-1',
  prefix: '',
  pathStyle: true,
  credentials: TEST_S3_CREDENTIALS,
});
const id = Number(env('ARTIFACT_ID'));
const partBytes = Number(env('PART_BYTES'));
const job = {
  data: { id },
  id: `move-artifact-${id}`,
  updateData: async (data: MoveArtifactData) => {
    job.data = data;
  },
};
const move = moveArtifactProcessor({ db, redis }, store, createLogger('bench', 'silent'), { partBytes });

const rss = () => process.memoryUsage().rss / MiB;
const before = rss();
let highest = before;
const sampler = setInterval(() => {
  highest = Math.max(highest, rss());
}, 20);
const started = performance.now();
const outcome = await move(job as unknown as Job<MoveArtifactData>);
const seconds = (performance.now() - started) / 1000;
clearInterval(sampler);
highest = Math.max(highest, rss());
const round = (x: number) => Math.round(x * 10) / 10;
process.stdout.write(
  `${JSON.stringify({
    outcome,
    partMiB: partBytes / MiB,
    seconds: round(seconds),
    rssBeforeMiB: round(before),
    rssHighestDuringMiB: round(highest),
    peakRssMiB: round(process.resourceUsage().maxRSS / 1024),
  })}\n`,
);
await db.dispose();
redis.disconnect();
