// Every process's /metrics, after real builds: a master's counts (builds finished by
// results, their log lines, the claim loop, the queue and the workers, the background jobs,
// Node's process metrics), a worker's counts (commands, output bytes and lines, reconnects),
// and an exposition that Prometheus's own checker, promtool (from Debian's prometheus
// package, which the test script installs), accepts for api, master and worker alike.
//
// One cluster for all of them (issue 29 §5: the master's test had a cluster of its own for
// one `it`). Each test reads its counters before and after what it does, so that none
// depends on which ran before it: the worker's test restarts the master, which resets its
// counters, and every test's builds add to the same master's.
//
// Measured with locks.test.ts, which took in worker-slots' test the same way: user+sys CPU
// seconds of `/usr/bin/time -f '%U %S' env FOCUS=1 npm test -- test/e2e/worker-metrics.test.ts
// test/e2e/locks.test.ts` were 16.4, 19.6 and 21.6 (two clusters), against 23.6 and 26.8
// for the four files as they were (four clusters), on the shared 2-core machine at load 12-23.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Running } from '../helpers/processes.js';
import { eventually, waitFor } from '../helpers/wait.js';
import { Cluster, type MasterProc } from './cluster.js';

let c: Cluster;
let m: MasterProc;
let w: Running & { probePort: number };
beforeAll(async () => {
  c = await Cluster.start();
  m = await c.startMaster('m1');
  w = await c.startWorker('w1', m);
}, 120_000);
afterAll(async () => {
  await c?.stop();
});

const text = async (url: string) => {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
};
const workerMetrics = () => text(`http://127.0.0.1:${w.probePort}/metrics`);
const masterMetrics = async () => samples(await text(`http://127.0.0.1:${m.probePort}/metrics`));

function samples(exposition: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of exposition.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

function promtool(exposition: string): { status: number | null; output: string } {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
  if (r.error) throw r.error;
  return { status: r.status, output: r.stdout + r.stderr };
}

describe("a master's /metrics", () => {
  it('counts builds, their lines and claims, and shows the queue and the workers', async () => {
    const before = await masterMetrics();
    const count = (s: Map<string, number>, name: string) => s.get(name) ?? 0;
    const added = (s: Map<string, number>, name: string) => count(s, name) - count(before, name);
    expect(before.get('flotilla_builds_running')).toBe(0);
    expect(before.get('flotilla_workers_connected')).toBe(1);

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
      masterMetrics,
      (s) =>
        added(s, 'flotilla_builds_finished_total{results="warnings"}') === 2 &&
        s.get('flotilla_builds_running') === 0,
      { timeoutMs: 60_000 },
    );
    // basic warns by design (its lint step): two builds, results "warnings".
    expect(added(after, 'flotilla_builds_finished_total{results="warnings"}')).toBe(2);
    expect(added(after, 'flotilla_build_duration_seconds_count{results="warnings"}')).toBe(2);
    // 500 lines + 1 on stderr + the other steps' output, and the headers, per build.
    expect(added(after, 'flotilla_log_lines_total')).toBeGreaterThan(2 * 501);
    expect(added(after, 'flotilla_claims_total{outcome="won"}')).toBe(2);
    // One master: it never loses a claim.
    expect(count(after, 'flotilla_claims_total{outcome="lost"}')).toBe(0);
    // At least unreachable's; the periodic scheduler of quick (no worker here) adds its own,
    // at any moment: the gauge and the API are read again until one did not fall between them.
    const queue = async () => ({
      gauge: (await masterMetrics()).get('flotilla_buildrequests_queued'),
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

describe("a worker's /metrics", () => {
  it('counts the commands it ran and the output it sent, and shows it connected', async () => {
    const before = samples(await workerMetrics());
    expect(before.get('flotilla_worker_connected')).toBe(1);
    expect(before.get('flotilla_worker_commands_running')).toBe(0);
    expect(before.get('flotilla_worker_reconnects_total')).toBe(0);
    const [, brids] = await c.force('force-basic');
    const build = await c.buildOf(Object.values(brids)[0]!);
    await c.finished(build.buildid);
    const after = samples(await workerMetrics());
    // basic's steps run five commands; `lines` alone prints 500 lines.
    expect(after.get('flotilla_worker_commands_total')! - before.get('flotilla_worker_commands_total')!).toBe(
      5,
    );
    expect(after.get('flotilla_worker_output_lines_total')).toBeGreaterThanOrEqual(500);
    expect(after.get('flotilla_worker_output_bytes_total')).toBeGreaterThan(
      after.get('flotilla_worker_output_lines_total')!,
    );
    expect(after.get('flotilla_worker_commands_running')).toBe(0);
    expect(after.get('process_resident_memory_bytes')).toBeGreaterThan(10_000_000);
  }, 120_000);

  it('counts a reconnect when its master comes back', async () => {
    await m.proc.stop('SIGTERM');
    await waitFor(
      'worker lost its master',
      async () => samples(await workerMetrics()).get('flotilla_worker_connected') === 0,
    );
    m = await c.startMaster('m1', {}, m.workerPort);
    await waitFor(
      'the worker to connect to the restarted master',
      async () => samples(await workerMetrics()).get('flotilla_worker_connected') === 1,
      { proc: w },
    );
    expect(samples(await workerMetrics()).get('flotilla_worker_reconnects_total')).toBe(1);
  }, 120_000);
});

describe('promtool check metrics', () => {
  it('accepts the exposition of every process: api, master and worker', async () => {
    for (const [who, url] of [
      ['api', `http://127.0.0.1:${c.api.probePort}/metrics`],
      ['master', `http://127.0.0.1:${m.probePort}/metrics`],
      ['worker', `http://127.0.0.1:${w.probePort}/metrics`],
    ] as const) {
      const r = promtool(await text(url));
      expect(r.output, who).toBe('');
      expect(r.status, who).toBe(0);
    }
  });

  it("refuses what prom-client's defaults used to show: a gauge named _total", () => {
    const r = promtool(
      '# HELP nodejs_active_handles_total Total handles.\n# TYPE nodejs_active_handles_total gauge\nnodejs_active_handles_total 3\n',
    );
    expect(r.status).not.toBe(0);
    expect(r.output).toContain('non-counter metrics should not have "_total" suffix');
  });
});
