// The fleet_reads scenario's virtual users, as load/k6/fleet-reads.js runs them: the five
// reads of issue 35 §1 item 5 on the ten-million-build set of load/generate/fleet.sql, each
// with its own trend (read_<name>: the page, every request it makes, in sequence), so that
// each has its own p95 threshold. Each user does the five in turn without pause; the
// builders, builds and pages are drawn at random so that no answer is asked twice in a row
// (the API keeps pages: a benchmark that repeats one URL measures the cache).
//
//   builder_builds  /builders/{b}/builds?order=-number&limit=200, b any of the 1,000
//   console         the newest 50 changes, then the builds of those changes: Flotilla's one
//                   /change_builds read (what its console asks), or, where the server has no
//                   such route (Buildbot 3.7), one /changes/{id}/builds per change, as
//                   Buildbot's own console asks
//   waterfall       a page of 30 builders by name, then their newest 100 builds
//                   (builderid__in, the fields the waterfall draws), as the waterfall asks
//   build           a build of the newest 2,000,000 (those with steps), then its steps
//   prev_success    the previous successful build of a builder before build n, the query of
//                   Buildbot's getPrevSuccessfulBuild as REST (results=0, number__lt=n,
//                   order=-number, limit=1), then /builds/{id}/changes, which reporters ask
//                   and which walks back to that build; half of them on the four broken
//                   builders of fleet.sql, whose last success is 2,000 builds back
//
// fleet.sql's layout names the builds without asking: builder b's build n is build
// (n-1)*1000 + b. Used by load/run.ts (`node --import tsx load/run.ts fleet_reads --base
// ...`); the two must make the same requests.
import { httpMetrics, type Metric, type ScenarioSpec, seconds } from '../scenario.js';
import { timedGet } from '../timed-get.js';

const BUILDERS = 1000;
/** fleet.sql's broken builders: their newest 2,000 builds failed, at any scale from 0.2. */
const BROKEN = [250, 500, 750, 1000];
const BROKEN_RUN = 2000;
/** The newest builds have steps (run.sh STEPS=2000000 in load/fleet/reads.sh's recipe). */
const WITH_STEPS = 2_000_000;

const rand = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1));
const buildId = (builderid: number, number: number) => (number - 1) * BUILDERS + builderid;

export const FLEET_READS = ['builder_builds', 'console', 'waterfall', 'build', 'prev_success'] as const;

export async function fleetReads(
  sc: ScenarioSpec,
  base: string,
  headers: Record<string, string>,
): Promise<Record<string, Metric>> {
  const reads: Record<string, number[]> = Object.fromEntries(FLEET_READS.map((n) => [n, []]));
  const parts: Record<string, number[]> = { prev_success_page: [], prev_success_changes: [] };
  const end = Date.now() + seconds(sc.duration) * 1000;
  const { get: timed, durations, counts } = timedGet(base, headers);
  const get = (path: string) => timed(path, true);

  // Flotilla answers the builds of many changes in one read; Buildbot 3.7 has no such route.
  const oneRead = (await fetch(`${base}/change_builds?changeid__in=1&limit=1`, { headers })).status === 200;
  const newest = async (path: string): Promise<number> => {
    const body = (await (await fetch(`${base}${path}`, { headers })).json()) as {
      builds?: { buildid: number; number: number }[];
    };
    return path.includes('number') ? (body.builds?.[0]?.number ?? 0) : (body.builds?.[0]?.buildid ?? 0);
  };
  const maxBuild = await newest('/builds?order=-buildid&limit=1');
  // 10,000 at fleet.sql's scale 1; every fleet builder has as many
  const perBuilder = await newest('/builders/1/builds?order=-number&limit=1');
  if (perBuilder < 10 || maxBuild < BUILDERS * perBuilder)
    throw new Error(`${base} does not hold fleet.sql's data`);
  const firstWithSteps = Math.max(1, BUILDERS * perBuilder - WITH_STEPS + 1);

  const actions: Record<(typeof FLEET_READS)[number], () => Promise<void>> = {
    builder_builds: async () => {
      await get(`/builders/${rand(1, BUILDERS)}/builds?order=-number&limit=200`);
    },
    console: async () => {
      const changes: { changeid: number }[] = (await get('/changes?order=-changeid&limit=50'))?.changes ?? [];
      const ids = changes.map((c) => c.changeid);
      if (oneRead) {
        const q = ids.map((id) => `changeid__in=${id}`).join('&');
        const fields = sc.fields?.console ?? [];
        await get(
          `/change_builds?${q}&order=-changeid&order=-buildid&limit=${ids.length * 50}&${fields.map((f) => `field=${f}`).join('&')}`,
        );
      } else {
        for (const id of ids) await get(`/changes/${id}/builds`);
      }
    },
    waterfall: async () => {
      const page = rand(0, BUILDERS / 30 - 1);
      const builders: { builderid: number }[] =
        (await get(`/builders?order=name&limit=30&offset=${page * 30}&field=builderid&field=name`))
          ?.builders ?? [];
      const q = builders.map((b) => `builderid__in=${b.builderid}`).join('&');
      const fields = sc.fields?.waterfall ?? [];
      await get(`/builds?${q}&order=-buildid&limit=100&${fields.map((f) => `field=${f}`).join('&')}`);
    },
    build: async () => {
      const id = rand(firstWithSteps, maxBuild);
      await get(`/builds/${id}`);
      await get(`/builds/${id}/steps`);
    },
    prev_success: async () => {
      const broken = Math.random() < 0.5;
      const b = broken ? BROKEN[rand(0, BROKEN.length - 1)]! : rand(1, BUILDERS);
      const n = rand(broken ? Math.max(2, perBuilder - BROKEN_RUN + 1) : 2, perBuilder);
      // each request's own time as well, to tell which of the two makes the read's tail
      let t = performance.now();
      await get(`/builders/${b}/builds?results=0&complete=true&number__lt=${n}&order=-number&limit=1`);
      parts.prev_success_page!.push(performance.now() - t);
      t = performance.now();
      await get(`/builds/${buildId(b, n)}/changes`);
      parts.prev_success_changes!.push(performance.now() - t);
    },
  };

  const vu = async () => {
    while (Date.now() < end) {
      for (const name of FLEET_READS) {
        const t0 = performance.now();
        await actions[name]();
        reads[name]!.push(performance.now() - t0);
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: sc.vus }, vu));
  const took = (performance.now() - t0) / 1000;
  return {
    ...httpMetrics(durations, counts.requests, counts.failed, took),
    ...Object.fromEntries(
      Object.entries({ ...reads, ...parts }).map(([name, samples]) => [
        `read_${name}`,
        { kind: 'trend', samples } as Metric,
      ]),
    ),
  };
}
