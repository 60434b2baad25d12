// A master's /metrics after real builds: builds finished by results, their log lines, the
// claim loop, the queue and the workers, the background jobs, and Node's process metrics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/wait.js';
import { Cluster, type MasterProc } from './cluster.js';

let c: Cluster;
let m: MasterProc;
beforeAll(async () => {
  c = await Cluster.start();
  m = await c.startMaster('m1');
  await c.startWorker('w1', m);
});
afterAll(async () => {
  await c?.stop();
});

async function scrape(): Promise<Map<string, number>> {
  const res = await fetch(`http://127.0.0.1:${m.probePort}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const samples = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

describe("a master's /metrics", () => {
  it('counts builds, their lines and claims, and shows the queue and the workers', async () => {
    const before = await scrape();
    expect(before.get('flotilla_builds_running')).toBe(0);
    expect(before.get('flotilla_workers_connected')).toBe(1);
    expect(before.get('flotilla_log_lines_total')).toBe(0);

    // unreachable's only worker never connects: its request stays queued.
    await c.force('force-unreachable');
    for (let i = 0; i < 2; i++) {
      const [, brids] = await c.force('force-basic');
      const build = await c.buildOf(Object.values(brids)[0]!);
      await c.finished(build.buildid);
    }
    // The API shows a build finished once its row says so; the master counts it just after
    // writing that row, so the scrape waits for the count (on a loaded machine the gap shows).
    const after = await eventually(
      scrape,
      (s) =>
        s.get('flotilla_builds_finished_total{results="warnings"}') === 2 &&
        s.get('flotilla_builds_running') === 0,
      { timeoutMs: 60_000 },
    );
    // basic warns by design (its lint step): two builds, results "warnings".
    expect(after.get('flotilla_builds_finished_total{results="warnings"}')).toBe(2);
    expect(after.get('flotilla_build_duration_seconds_count{results="warnings"}')).toBe(2);
    // 500 lines + 1 on stderr + the other steps' output, and the headers, per build.
    expect(after.get('flotilla_log_lines_total')).toBeGreaterThan(2 * 501);
    expect(after.get('flotilla_claims_total{outcome="won"}')).toBe(2);
    expect(after.get('flotilla_claims_total{outcome="lost"}')).toBe(0);
    // At least unreachable's; the periodic scheduler of quick (no worker here) adds its own,
    // at any moment: the gauge and the API are read again until one did not fall between them.
    const queue = async () => ({
      gauge: (await scrape()).get('flotilla_buildrequests_queued'),
      pending: (await c.get('/buildrequests?claimed=false&complete=false')).meta.total as number,
    });
    const { gauge, pending } = await eventually(queue, (q) => q.gauge === q.pending, { timeoutMs: 60_000 });
    expect(pending).toBeGreaterThanOrEqual(1);
    expect(gauge).toBe(pending);
    expect(after.get('flotilla_claim_pass_seconds_count')).toBeGreaterThan(0);
    expect(after.get('flotilla_builds_running')).toBe(0);
    // The finished logs were queued for compression, and the jobs show their queues.
    expect(after.has('flotilla_jobs_queue_depth{queue="compress-log",state="waiting"}')).toBe(true);
    // Its builds' events went out through the publisher (core/events/metrics.ts), none dropped.
    expect(after.get('flotilla_events_published_total')).toBeGreaterThan(0);
    expect(after.get('flotilla_events_dropped_total')).toBe(0);
    expect(after.get('process_resident_memory_bytes')).toBeGreaterThan(10_000_000);
    expect(after.has('nodejs_eventloop_lag_p99_seconds')).toBe(true);
  });
});
