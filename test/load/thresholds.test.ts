// The load scenarios' thresholds can fail: every threshold of every scenario fails on a bad
// run's metrics and passes on a good run's, and the local runner fails a whole run (exit 1,
// a FAIL line per broken threshold) against a real API whose database has no build or log
// to show: the lists answer 200 (empty), the entity endpoints 404.
//
// That API is the in-process one (test/api/lib/harness.ts) listening on a free port, on the
// suite's shared Redis: what is tested is the runner, a process of its own, and the answers
// it judges, not how the API starts (issue 29 §5: this file used to start its own Redis and
// an API process for that one `it`).
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judge, loadScenarios, type Metric } from '../../load/scenario.js';
import { ApiUnderTest } from '../api/lib/harness.js';

const spec = loadScenarios();

/** Metrics as a run of the given quality would collect them, for every metric a threshold names. */
function metrics(names: string[], good: boolean): Record<string, Metric> {
  const out: Record<string, Metric> = {};
  for (const name of names) {
    if (name.endsWith('_duration') || name === 'ws_subscribe_ack')
      out[name] = { kind: 'trend', samples: Array.from({ length: 100 }, () => (good ? 5 : 5000)) };
    else if (name === 'checks') out[name] = { kind: 'rate', passes: good ? 100 : 50, total: 100 };
    else if (name.endsWith('_failed')) out[name] = { kind: 'rate', passes: good ? 0 : 50, total: 100 };
    else out[name] = { kind: 'counter', count: good ? 100 : 0, seconds: 10 };
  }
  return out;
}

describe('every scenario', () => {
  for (const [name, sc] of Object.entries(spec.scenarios)) {
    it(`${name}: has a checks threshold, and every threshold fails on a bad run and passes on a good one`, () => {
      expect(sc.thresholds.checks).toEqual(['rate>0.99']);
      const names = Object.keys(sc.thresholds);
      expect(judge(sc.thresholds, metrics(names, false)).filter((v) => v.ok)).toEqual([]);
      expect(judge(sc.thresholds, metrics(names, true)).filter((v) => !v.ok)).toEqual([]);
    });
  }
});

describe('load/run.ts against an API with nothing to show', () => {
  let api: ApiUnderTest;
  let port: number;
  beforeAll(async () => {
    api = await ApiUnderTest.start('migrated');
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    port = (api.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await api?.close();
  });

  it('fails the run: exit 1, checks and http_req_failed marked FAIL', async () => {
    // No build 1 and no log 1 in an empty database: their endpoints answer 404. Run without
    // blocking this process: it is the API the runner talks to.
    const r = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        'tsx',
        'load/run.ts',
        'collections',
        '--base',
        `http://127.0.0.1:${port}/api/v2`,
        '--duration',
        '2s',
        '--vus',
        '1',
      ],
      { env: { ...process.env, BUILD_ID: '1', LOG_ID: '1' }, encoding: 'utf8', timeout: 60_000 },
    ).then(
      ({ stdout }) => ({ stdout, status: 0 as number | null }),
      (err: { stdout?: string; code?: number | string | null }) => ({
        stdout: err.stdout ?? '',
        status: typeof err.code === 'number' ? err.code : null,
      }),
    );
    expect(r.stdout).toMatch(/FAIL checks rate>0\.99 \(0\.\d+\)/);
    expect(r.stdout).toMatch(/FAIL http_req_failed rate<0\.01 \(0\.\d+\)/);
    expect(r.stdout).toMatch(/threshold\(s\) failed/);
    expect(r.status).toBe(1);
  }, 90_000);
});
