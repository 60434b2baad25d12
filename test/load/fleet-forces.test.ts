// The fleet_forces scenario as load/run.ts runs it (load/fleet/forces.ts, the twin of
// load/k6/fleet-forces.js) against a real cluster: forces through the force scheduler's
// JSON-RPC, each build's start seen on the API's /ws. While no master runs, the forces are
// accepted and nothing starts: the run fails (exit 1; build_start_failed and checks FAIL).
// With a master and a worker, every forced build is seen to start, once. The latency
// threshold's verdict is not asserted: on this shared machine the load decides it.
//
// One cluster (an API, then a master and one agent) for both runs: the first run's requests
// are built once the master comes, beside the second's, which tells its own builds apart by
// their request ids.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Verdict } from '../../load/scenario.js';
import { Cluster } from '../e2e/cluster.js';

let c: Cluster;

beforeAll(async () => {
  // the scenario's scheduler, over one builder the suite's agent runs
  c = await Cluster.start({ config: { force_schedulers: [{ name: 'fleet', builders: ['quick'] }] } });
}, 180_000);
afterAll(async () => {
  await c?.stop();
});

/** load/run.ts fleet_forces, not blocking this process (the cluster's output pipes drain meanwhile). */
function runner(...args: string[]): Promise<{ status: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'load/run.ts', 'fleet_forces', '--base', c.api.base, '--rate', '2', ...args],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let stdout = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout }));
  });
}

describe('load/run.ts fleet_forces', () => {
  it('fails while nothing builds, and sees every forced build start once a master runs', async () => {
    const idle = await runner('--duration', '1s', '--start-timeout', '2s');
    expect(idle.stdout).toMatch(/build_start: no samples/);
    expect(idle.stdout).toMatch(/FAIL build_start_failed rate<0\.01 \(1\)/);
    // both forces accepted, neither build started: half the checks
    expect(idle.stdout).toMatch(/FAIL checks rate>0\.99 \(0\.5\)/);
    expect(idle.stdout).toMatch(/ok {3}http_req_failed rate<0\.01 \(0\)/);
    expect(idle.status).toBe(1);

    const master = await c.startMaster('forces');
    await c.startWorker('q1', master);
    const out = join(c.dir, 'forces.json');
    const run = await runner('--duration', '2s', '--start-timeout', '60s', '--out', out);
    const report = JSON.parse(readFileSync(out, 'utf8')).report.fleet_forces as {
      metrics: Record<string, string>;
      verdicts: Verdict[];
    };
    const value = (metric: string) => report.verdicts.find((v) => v.metric === metric)?.value;
    expect(report.metrics.build_start, run.stdout).toMatch(/^build_start: n=4 p50=/);
    expect(value('builds_started')).toBe(4);
    expect(value('build_start_failed')).toBe(0);
    expect(value('checks')).toBe(1);
    expect(value('dropped_iterations')).toBe(0);
    expect(report.verdicts.filter((v) => !v.ok && v.metric !== 'build_start')).toEqual([]);
  }, 240_000);
});
