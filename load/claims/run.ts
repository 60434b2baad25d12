// The claim race at scale: MASTERS masters (3), each with two workers of 8 slots, on one
// database and one Redis, all real processes (test/e2e/cluster.ts starts them as their
// containers run); REQUESTS one-step build requests (1,000) forced through the API while
// every worker is paused, so that all are queued at once, then every worker unpaused. It
// prints how long the masters took to build them all, the claims each won and lost (their
// /metrics), and checks, through the API, that each request was claimed and built exactly
// once. test/e2e/masters.test.ts runs the same race at 120 requests on every `npm test`.
//
//   load/claims/run.sh            (starts PostgreSQL and Redis for it; see there)
import { cpus } from 'node:os';
import { Cluster, type MasterProc } from '../../test/e2e/cluster.js';
import globalSetup from '../../test/global-setup.js';
import { sample } from '../../test/helpers/prometheus.js';
import { waitFor } from '../../test/helpers/wait.js';

const REQUESTS = Number(process.env.REQUESTS ?? 1000);
const MASTERS = Number(process.env.MASTERS ?? 3);
// Forces in flight at once while queueing.
const CONCURRENCY = 20;

async function inParallel<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: n }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
    }),
  );
}

// The template databases, and the services' build its processes run from (removed at the end).
const teardown = await globalSetup();
const c = await Cluster.start({
  // A force scheduler for `quick` (one `true` step on workers q1-q6).
  config: { force_schedulers: [{ name: 'force-quick', builders: ['quick'] }] },
});
try {
  const masters: MasterProc[] = [];
  const workers: string[] = [];
  for (let i = 0; i < MASTERS; i++) {
    const m = await c.startMaster(`claims-${i + 1}`);
    masters.push(m);
    for (const w of [`q${2 * i + 1}`, `q${2 * i + 2}`]) {
      await c.startWorker(w, m);
      workers.push(w);
    }
  }
  const workerIds = new Map<string, number>(
    (await c.get('/workers')).workers.map((w: { name: string; workerid: number }) => [w.name, w.workerid]),
  );
  const paused = async (on: boolean) => {
    for (const w of workers) await c.rpc(`/workers/${workerIds.get(w)}`, on ? 'pause' : 'unpause');
    await waitFor(`workers ${on ? 'paused' : 'unpaused'}`, async () =>
      (await c.get('/workers')).workers
        .filter((w: { name: string }) => workers.includes(w.name))
        .every((w: { paused: boolean }) => w.paused === on),
    );
  };
  await paused(true);
  const queued = performance.now();
  const brids: number[] = [];
  await inParallel(
    Array.from({ length: REQUESTS }, (_, i) => i),
    CONCURRENCY,
    async (i) => {
      const [, ids] = await c.force('force-quick', { reason: `claims ${i}` });
      brids.push(...Object.values(ids));
    },
  );
  const queueSeconds = (performance.now() - queued) / 1000;
  const started = performance.now();
  await paused(false);
  const ours = new Set(brids);
  const builderid = (await c.get('/builders/quick')).builders[0].builderid as number;
  const completeOfOurs = async () =>
    (
      (
        await c.get(
          `/buildrequests?builderid=${builderid}&complete=true&field=buildrequestid&field=builderid&field=complete&limit=100000`,
        )
      ).buildrequests as { buildrequestid: number }[]
    ).filter((r) => ours.has(r.buildrequestid)).length;
  await waitFor(`all ${REQUESTS} requests to complete`, async () => (await completeOfOurs()) === REQUESTS, {
    timeoutMs: 30 * 60_000,
    everyMs: 500,
  });
  const seconds = (performance.now() - started) / 1000;

  // Exactly once: one build per request, one claim each (a claim is a request's claimed_by).
  const builds = (
    (
      await c.get(
        `/builds?builderid=${builderid}&field=builderid&field=buildrequestid&field=masterid&field=results&limit=100000`,
      )
    ).builds as { buildrequestid: number; masterid: number; results: number }[]
  ).filter((b) => ours.has(b.buildrequestid));
  const perRequest = new Set(builds.map((b) => b.buildrequestid));
  const notOk = builds.filter((b) => b.results !== 0).length;
  const exactlyOnce = builds.length === REQUESTS && perRequest.size === REQUESTS && notOk === 0;

  console.log(
    `Flotilla, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), Node ${process.version}; ` +
      `PostgreSQL, Redis, API, ${MASTERS} masters and ${workers.length} workers on this machine.\n`,
  );
  console.log(
    `${REQUESTS} requests queued in ${queueSeconds.toFixed(1)} s (${CONCURRENCY} forces at a time, workers paused)`,
  );
  console.log(
    `built in ${seconds.toFixed(1)} s after the unpause: ${(REQUESTS / seconds).toFixed(1)} builds/s`,
  );
  console.log(
    `exactly once: ${exactlyOnce ? 'yes' : 'NO'} (${builds.length} builds of ${perRequest.size} requests, ${notOk} not SUCCESS)\n`,
  );
  console.log('| master | builds | claims won | claims lost |');
  console.log('|---|---|---|---|');
  const masterIds = new Map<string, number>(
    (await c.get('/masters')).masters.map((m: { name: string; masterid: number }) => [m.name, m.masterid]),
  );
  for (const m of masters) {
    const text = await (await fetch(`http://127.0.0.1:${m.probePort}/metrics`)).text();
    const won = sample(text, 'flotilla_claims_total', { outcome: 'won' }) ?? 0;
    const lost = sample(text, 'flotilla_claims_total', { outcome: 'lost' }) ?? 0;
    const n = builds.filter((b) => b.masterid === masterIds.get(m.name)).length;
    console.log(`| ${m.name} | ${n} | ${won} | ${lost} |`);
  }
  if (!exactlyOnce) process.exitCode = 1;
} finally {
  await c.stop();
  teardown();
}
