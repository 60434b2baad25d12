// Retention under load: deletes CHUNKS log chunks (1,000,000) and BUILDS builds (100,000)
// with the retention job's own code (runRetention) while RUNNING builds (20) claim requests
// and append log lines, and reports the p99 of a claim and of a log append quiet (before the
// cleanup) and during it. Issue 33 asks for the p99s during the cleanup within 2x of quiet,
// and for no build to fail.
//
//   DATABASE_URL=postgresql://...  REDIS_URL=redis://...  node --import tsx load/bench/retention/run.ts
//   (environment: CHUNKS, BUILDS, RUNNING, QUIET_SECONDS; load/bench/retention/run.sh starts the
//   bench PostgreSQL and a Redis for it)
//
// What it measures is the database's part, which is where the cleanup could make anyone
// wait: the builds are the master's data operations (claimBuildRequests, newBuild, newStep,
// addLog, appendLog, finishLog, finishStep, finishBuild, completeBuildRequests) run in this
// process over their own pool, as a master runs them, without workers. It creates a fresh
// database next to DATABASE_URL's (the role needs CREATEDB) and drops it at the end.

import { retention } from '../../../services/core/config/master-config/retention.js';
import { claimBuildRequests, completeBuildRequests } from '../../../services/core/data/buildrequests.js';
import { finishBuild, newBuild } from '../../../services/core/data/builds.js';
import { addBuildset } from '../../../services/core/data/buildsets.js';
import { addLog, appendLog, finishLog } from '../../../services/core/data/logs.js';
import { masterActive } from '../../../services/core/data/masters.js';
import { finishStep, newStep, startStep } from '../../../services/core/data/steps.js';
import { type DataContext, transact } from '../../../services/core/data/transaction.js';
import { migrate } from '../../../services/core/db/migrate.js';
import { createPool, sql } from '../../../services/core/db/pool.js';
import { createRedis } from '../../../services/core/redis.js';
import { Results } from '../../../services/core/results.js';
import { runRetention } from '../../../services/master/jobs/retention.js';
import { SIZES, seed } from './seed.js';

const { chunks: CHUNKS, builds: BUILDS, running: RUNNING } = SIZES;
const QUIET_SECONDS = Number(process.env.QUIET_SECONDS ?? 30);
const base = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
if (!base || !redisUrl) throw new Error('set DATABASE_URL and REDIS_URL');

const p99 = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.99))] ?? Number.NaN;
};

interface Samples {
  claims: number[];
  appends: number[];
  failed: number;
  built: number;
}

// One running build after another on `builderid`: claim, start, append a line batch every
// 50 ms for two seconds, finish. Latencies go to `into()` of the moment.
async function builds(
  ctx: DataContext,
  builderid: number,
  masterid: number,
  into: () => Samples,
  stop: () => boolean,
) {
  while (!stop()) {
    const s = into();
    try {
      const { brids } = await transact(ctx, (tx) =>
        addBuildset(tx, {
          scheduler: 'bench',
          sourcestamps: [{ branch: 'main', revision: 'r', repository: 'r', project: 'p', codebase: '' }],
          reason: 'bench',
          builderids: [builderid],
        }),
      );
      const brid = brids[builderid]!;
      let t = performance.now();
      await transact(ctx, (tx) => claimBuildRequests(tx, [brid], masterid));
      s.claims.push(performance.now() - t);
      const { logid, stepid, buildid } = await transact(ctx, async (tx) => {
        const { buildid } = await newBuild(tx, { builderid, buildrequestid: brid, workerid: null, masterid });
        const { stepid } = await newStep(tx, buildid, 'spew');
        await startStep(tx, stepid);
        return { buildid, stepid, logid: await addLog(tx, stepid, 'stdio', 's') };
      });
      for (let i = 0; i < 40 && !stop(); i++) {
        t = performance.now();
        await transact(ctx, (tx) => appendLog(tx, logid, `o${'line of output '.repeat(4)}${i}\n`.repeat(20)));
        s.appends.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 50));
      }
      await transact(ctx, async (tx) => {
        await finishLog(tx, logid);
        await finishStep(tx, stepid, Results.SUCCESS);
        await finishBuild(tx, buildid, Results.SUCCESS);
        await completeBuildRequests(tx, [brid], Results.SUCCESS, masterid);
      });
      s.built++;
    } catch (err) {
      s.failed++;
      console.error('build failed:', (err as Error).message);
    }
  }
}

const dbName = `retentionbench_${Date.now()}`;
const admin = createPool(base, { poolSize: 1 });
const url = new URL(base);
url.pathname = `/${dbName}`;
await admin.query(sql`CREATE DATABASE ${sql.ident(dbName)}`);
const db = createPool(url.toString(), { poolSize: RUNNING + 4 });
const cleanupDb = createPool(url.toString(), { poolSize: 2 });
const redis = createRedis(redisUrl, 'retention-bench');
try {
  await migrate(db);
  const ctx: DataContext = { db, redis };
  const { builderid, masterid } = await transact(ctx, async (tx) => {
    const masterid = await masterActive(tx, 'bench-master');
    const [b] = await tx.q.query(
      sql`INSERT INTO builders (name, name_hash) VALUES ('old', md5('old')) RETURNING id`,
    );
    return { builderid: b.id as number, masterid };
  });
  let t = performance.now();
  await seed(db, { builderid, masterid, builds: BUILDS, chunks: CHUNKS });
  const seeded = (performance.now() - t) / 1000;
  const [size] = await db.query(sql`SELECT pg_database_size(current_database()) AS bytes`);

  const quiet: Samples = { claims: [], appends: [], failed: 0, built: 0 };
  const during: Samples = { claims: [], appends: [], failed: 0, built: 0 };
  let phase: Samples = quiet;
  let stopping = false;
  // The running builds have a builder of their own, so max_builds and horizons of the old
  // one never select them (and they finish now, inside any horizon).
  const [live] = await db.query(
    sql`INSERT INTO builders (name, name_hash) VALUES ('live', md5('live')) RETURNING id`,
  );
  const runners = Array.from({ length: RUNNING }, () =>
    builds(
      ctx,
      live.id,
      masterid,
      () => phase,
      () => stopping,
    ),
  );
  await new Promise((r) => setTimeout(r, QUIET_SECONDS * 1000));
  phase = during;
  t = performance.now();
  const run = await runRetention(
    cleanupDb,
    retention.parse({ build_horizon: '365d', request_horizon: '365d', max_run_seconds: 86_400 }),
  );
  const cleanup = (performance.now() - t) / 1000;
  stopping = true;
  await Promise.all(runners);
  const [left] =
    await db.query(sql`SELECT (SELECT count(*) FROM logchunks l JOIN logs g ON g.id = l.logid JOIN steps s ON s.id = g.stepid JOIN builds b ON b.id = s.buildid WHERE b.builderid = ${builderid})::int AS chunks,
                                           (SELECT count(*) FROM builds WHERE builderid = ${builderid})::int AS builds`);
  const f = (x: number) => x.toFixed(1);
  console.log(
    `seeded ${BUILDS} builds, ${CHUNKS} chunks in ${f(seeded)} s (database ${(Number(size.bytes) / 1e6).toFixed(0)} MB)`,
  );
  console.log(
    `cleanup: ${f(cleanup)} s, deleted ${JSON.stringify(run.deleted)}, left ${left.builds} builds, ${left.chunks} chunks`,
  );
  console.log('');
  console.log('| phase | claims | claim p99 ms | appends | append p99 ms | builds done | builds failed |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [name, s] of [
    ['quiet', quiet],
    ['during cleanup', during],
  ] as const)
    console.log(
      `| ${name} | ${s.claims.length} | ${f(p99(s.claims))} | ${s.appends.length} | ${f(p99(s.appends))} | ${s.built} | ${s.failed} |`,
    );
} finally {
  redis.disconnect();
  await db.dispose();
  await cleanupDb.dispose();
  await admin.query(sql`DROP DATABASE IF EXISTS ${sql.ident(dbName)} WITH (FORCE)`);
  await admin.dispose();
}
