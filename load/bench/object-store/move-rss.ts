// The resident memory of a master moving one large artifact to the object store (issue 33
// §2: memory stays bounded whatever the size): an artifact of SIZE_MIB (200) seeded into
// PostgreSQL as an upload writes it, then moved by move-rss-child.ts in a process of its own,
// once with the move's default parts (8 MiB, a multipart upload read part by part) and once
// with one part larger than the artifact (the object held whole and sent in one PUT, what a
// move did before multipart uploads), each on a fresh copy. The S3 server
// (test/helpers/s3-server.ts, in memory, every signature checked) runs in a third process.
//
//   load/bench/object-store/run.sh move-rss          (SIZE_MIB=200; WHOLE=0: the part-by-part move only)
import { randomBytes } from 'node:crypto';
import { appendArtifact, completeArtifact, newArtifact } from '../../../services/core/data/artifacts.js';
import { newBuild } from '../../../services/core/data/builds.js';
import { newStep } from '../../../services/core/data/steps.js';
import { type DataContext, transact } from '../../../services/core/data/transaction.js';
import { createPool } from '../../../services/core/db/pool.js';
import { DEFAULT_PART_BYTES } from '../../../services/core/objstore/streamed-put.js';
import { createRedis } from '../../../services/core/redis.js';
import { buildParts } from '../../../test/core/data/harness.js';
import { start } from '../../../test/helpers/processes.js';
import { waitFor } from '../../../test/helpers/wait.js';

const MiB = 1024 * 1024;
const SIZE = Number(process.env.SIZE_MIB ?? 200) * MiB;
const databaseUrl = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
if (!databaseUrl || !redisUrl) throw new Error('set DATABASE_URL and REDIS_URL');
const db = createPool(databaseUrl);
const ctx: DataContext = { db, redis: createRedis(redisUrl, 'bench-move-rss') };

/** A complete artifact of SIZE random bytes, written 1 MiB a transaction as an upload is. */
async function seed(name: string): Promise<number> {
  const { buildid, stepid } = await transact(ctx, async (tx) => {
    const parts = await buildParts(tx);
    const { buildid } = await newBuild(tx, { ...parts, buildrequestid: parts.brid });
    return { buildid, stepid: (await newStep(tx, buildid, 'upload')).stepid };
  });
  const id = await transact(ctx, (tx) => newArtifact(tx, { buildid, stepid, name, kind: 'file' }));
  for (let at = 0; at < SIZE; at += MiB)
    await transact(ctx, (tx) => appendArtifact(tx, id, randomBytes(MiB)));
  await transact(ctx, (tx) => completeArtifact(tx, id));
  return id;
}

const s3 = start(process.execPath, ['--import', 'tsx', 'load/bench/object-store/s3.ts'], {});
try {
  await waitFor('the S3 server', () => s3.output().includes('http://'), { proc: s3 });
  const endpoint = s3.output().trim().split('\n')[0]!;
  const whole = process.env.WHOLE !== '0';
  for (const partBytes of whole ? [DEFAULT_PART_BYTES, SIZE + MiB] : [DEFAULT_PART_BYTES]) {
    const id = await seed(`big-${partBytes}.bin`);
    const child = start(process.execPath, ['--import', 'tsx', 'load/bench/object-store/move-rss-child.ts'], {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      S3_ENDPOINT: endpoint,
      ARTIFACT_ID: String(id),
      PART_BYTES: String(partBytes),
    });
    await waitFor('the move', () => child.output().includes('"outcome"'), {
      proc: child,
      timeoutMs: 600_000,
    });
    console.log(
      JSON.stringify({ sizeMiB: SIZE / MiB, ...JSON.parse(child.output().trim().split('\n').at(-1)!) }),
    );
    await child.stop('SIGTERM', 5000);
  }
} finally {
  await s3.stop('SIGKILL', 0);
  await db.dispose();
  ctx.redis.disconnect();
}
