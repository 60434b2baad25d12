// The busy scenario's virtual users, as load/k6/busy.js runs them: people in the web UI
// while a cluster builds. Each user visits one page after another, chosen by the weights of
// scenarios.json's `actions`; a page is the few API requests the UI makes for it. What a
// user saw on one page (running and finished builds, builders) chooses its next page, so
// the URLs spread over builders, builds, logs and offsets instead of repeating one.
//
// Used by load/run.ts (`node --import tsx load/run.ts busy --base ...`); the two must keep
// the same pages and the same requests per page.
import { httpMetrics, type Metric, type ScenarioSpec, seconds } from '../scenario.js';
import { timedGet } from '../timed-get.js';

interface BuildRef {
  buildid: number;
  builderid: number;
  number: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const pick = <T>(items: T[]): T | undefined => items[Math.floor(Math.random() * items.length)];

export async function busyMix(
  sc: ScenarioSpec,
  base: string,
  headers: Record<string, string>,
): Promise<Record<string, Metric>> {
  const weights = Object.entries(sc.actions ?? {});
  if (weights.length === 0) throw new Error('the busy scenario names no actions');
  const totalWeight = weights.reduce((sum, [, w]) => sum + w, 0);
  /** The action whose share of [0, totalWeight) holds r. */
  const choose = (r: number): string => {
    for (const [name, w] of weights) {
      if (r < w) return name;
      r -= w;
    }
    return weights[weights.length - 1]![0];
  };
  const pageSize = sc.pageSize ?? 30;
  const pages: Record<string, number[]> = Object.fromEntries(weights.map(([name]) => [name, []]));
  let lines = 0;
  const end = Date.now() + seconds(sc.duration) * 1000;

  const { get, durations, counts } = timedGet(base, headers);

  const builderList = (await (await fetch(`${base}/builders`, { headers })).json()) as {
    builders: { builderid: number }[];
  };
  const builderids = builderList.builders.map((b) => b.builderid);
  if (builderids.length === 0) throw new Error(`no builders at ${base}`);

  const vu = async () => {
    // What this user has seen: the UI links to them.
    let running: BuildRef[] = [];
    let seen: BuildRef[] = [];
    const remember = (builds: BuildRef[] | undefined) => {
      if (builds?.length)
        seen = builds.map(({ buildid, builderid, number }) => ({ buildid, builderid, number }));
    };
    const refreshRunning = async () => {
      const body = await get('/builds?complete=false&order=-buildid&limit=50', true);
      if (body) running = body.builds;
    };
    const actions: Record<string, () => Promise<void>> = {
      home: async () => {
        remember((await get('/builds?order=-buildid&limit=20', true))?.builds);
        await refreshRunning();
        await get('/builders', false);
      },
      builders: async () => {
        await get('/builders', false);
        await get('/workers', false);
        await get('/masters', false);
      },
      builder_builds: async () => {
        const b = pick(builderids)!;
        await get(`/builders/${b}`, false);
        remember((await get(`/builders/${b}/builds?order=-number&limit=${pageSize}`, true))?.builds);
        await get(`/buildrequests?builderid=${b}&complete=false&limit=50`, false);
      },
      build: async () => {
        if (running.length === 0 && seen.length === 0) await refreshRunning();
        const b = pick(
          Math.random() < 0.5 && running.length > 0 ? running : seen.length > 0 ? seen : running,
        );
        if (!b) return;
        await get(`/builders/${b.builderid}/builds/${b.number}?property=*`, false);
        await get(`/builds/${b.buildid}/steps`, false);
      },
      follow_log: async () => {
        await refreshRunning();
        // with nothing running (the quiet phase), a finished build's log: the same requests
        const b = pick(running.length > 0 ? running : seen);
        if (!b) return;
        const steps: any[] = (await get(`/builds/${b.buildid}/steps`, true))?.steps ?? [];
        const step = steps.filter((s) => s.started_at != null).pop();
        if (!step) return;
        const logs: any[] = (await get(`/steps/${step.stepid}/logs`, true))?.logs ?? [];
        const log = logs[0];
        if (!log) return;
        let offset = Math.max(0, log.num_lines - 100);
        for (let i = 0; i < (sc.follows ?? 4); i++) {
          // past the end of a log that has not grown yet: 404, as in log_tail
          const body = await get(`/logs/${log.logid}/contents?offset=${offset}&limit=1000`, true, [200, 404]);
          const content: string = body?.logchunks?.[0]?.content ?? '';
          const got = content.split('\n').length - 1;
          lines += got;
          offset += got;
          if (sc.pollMs) await sleep(sc.pollMs);
        }
      },
      old_builds: async () => {
        const b = pick(builderids)!;
        const first = 1 + Math.floor(Math.random() * (sc.maxOldPage ?? 300));
        for (let p = first; p < first + (sc.oldPages ?? 3); p++) {
          const body = await get(
            `/builders/${b}/builds?order=-number&limit=${pageSize}&offset=${p * pageSize}`,
            true,
          );
          remember(body?.builds);
        }
      },
    };
    for (const [name] of weights)
      if (!actions[name]) throw new Error(`no page "${name}" in the busy scenario`);
    while (Date.now() < end) {
      const name = choose(Math.random() * totalWeight);
      const t0 = performance.now();
      await actions[name]!();
      pages[name]!.push(performance.now() - t0);
      if (sc.thinkMs) await sleep(sc.thinkMs);
    }
  };

  const t0 = performance.now();
  await Promise.all(Array.from({ length: sc.vus }, vu));
  const took = (performance.now() - t0) / 1000;
  return {
    // k6's check: every request answered 200 (a log's contents: 200 or 404 past its end).
    ...httpMetrics(durations, counts.requests, counts.failed, took),
    log_lines_read: { kind: 'counter', count: lines, seconds: took },
    ...Object.fromEntries(
      Object.entries(pages).map(([name, samples]) => [`page_${name}`, { kind: 'trend', samples } as Metric]),
    ),
  };
}
