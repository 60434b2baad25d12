// Every process's /metrics, after real builds: a worker's counts (commands, output bytes
// and lines, reconnects), and an exposition that Prometheus's own checker, promtool (from
// Debian's prometheus package, which the test script installs), accepts for api, master
// and worker alike.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Running } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
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
      'worker back',
      async () => samples(await workerMetrics()).get('flotilla_worker_connected') === 1,
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
