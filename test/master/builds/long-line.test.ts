// A step that prints 200 MB without a newline, on a real master process with Flotilla's
// agent: the master's probes answer all the while, another build on the same master finishes
// with its output whole, and the long line is stored cut, with a marker that says so (issue
// 28, item 2: the writer rescanned the unfinished line on every piece, and a 100 MB line left
// /healthz unanswered for about 100 s). Debian's buildbot-worker 3.7 (msgpack) holds an
// unfinished line itself and rescans it as the old writer did (its LineBoundaryFinder: seconds
// for 1 MiB in 4 KiB pieces, docs/security.md), so on it a line of 300 kB shows the same cut,
// with a build beside it.
// And a set_property step whose command prints too much fails, setting nothing, rather than
// holding all of it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Results } from '../../../services/core/results.js';
import { MAX_OUTPUT } from '../../../services/master/builds/steps/set-property.js';
import { Cluster, type MasterProc } from '../../e2e/cluster.js';
import { createBuildbotWorker, startBuildbotWorker } from '../../helpers/buildbot-worker.js';
import { freePort } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/wait.js';

const BYTES: Record<string, number> = { w1: 200_000_000, bb1: 300_000 };
const printLong = (bytes: number) => `head -c ${bytes} /dev/zero | tr '\\\\0' x; echo; echo after`;
const OTHER = 'for i in $(seq 1 300); do echo "line $i"; done';
// In lines of 1000: buildbot-worker is slow on long ones (above).
const PROPERTY = `head -c ${MAX_OUTPUT + 1} /dev/zero | tr '\\\\0' y | fold -w 1000`;

const builders = (w: string) => `
  - name: long-${w}
    workers: [${w}]
    steps:
      - { type: shell, name: long, command: "${printLong(BYTES[w]!)}" }
  - name: other-${w}
    workers: [${w}]
    steps:
      - { type: shell, name: lines, command: '${OTHER}' }
  - name: prop-${w}
    workers: [${w}]
    steps:
      - { type: set_property, name: too-long, command: "${PROPERTY}", property: p }
`;

const CONFIG = `
title: long lines
www:
  page_cache: { max_staleness_ms: 0 }
protocols:
  msgpack_experimental_v7: { port: 0 }
workers:
  - { name: w1, password_env: W1_PASSWORD, max_builds: 2 }
  - { name: bb1, password: bb-one, max_builds: 2 }
builders:
${builders('w1')}
${builders('bb1')}
force_schedulers:
${['w1', 'bb1'].flatMap((w) => ['long', 'other', 'prop'].map((b) => `  - { name: ${b}-${w}, builders: [${b}-${w}] }`)).join('\n')}
`;

let c: Cluster;
let master: MasterProc;

beforeAll(async () => {
  c = await Cluster.start({ baseYaml: CONFIG });
  const msgpackPort = await freePort();
  master = await c.startMaster('long-lines', { MSGPACK_WORKER_PORT: String(msgpackPort) });
  await c.startWorker('w1', master);
  const dir = `${c.dir}/bb1`;
  createBuildbotWorker({ dir, port: msgpackPort, name: 'bb1', password: 'bb-one' });
  const bbw = startBuildbotWorker(dir);
  c.procs.push(bbw);
  await waitFor(
    'buildbot-worker bb1 to connect',
    async () => (await c.get('/workers?name=bb1')).workers[0]?.connected_to.length === 1,
    { proc: bbw },
  );
}, 180_000);
afterAll(async () => {
  await c?.stop();
});

async function forced(scheduler: string): Promise<any> {
  const [, brids] = await c.force(scheduler);
  return c.buildOf(Object.values(brids)[0]!);
}

async function stepOf(buildid: number, name: string): Promise<any> {
  return (await c.get(`/builds/${buildid}/steps?name=${name}`)).steps[0];
}

async function stdio(buildid: number, step: string): Promise<string> {
  return c.text(`/steps/${(await stepOf(buildid, step)).stepid}/logs/stdio/raw`);
}

/**
 * Asks the master's /healthz and /readyz in turn until stopped: each must answer 200 within
 * 5 s (a liveness condition, as the chart's probes have: not a measure of speed). Resolves to
 * the answers that failed, and how many were asked.
 */
function probing(m: MasterProc): { stop: () => Promise<{ failed: string[]; asked: number }> } {
  let running = true;
  const failed: string[] = [];
  let asked = 0;
  const loop = (async () => {
    while (running) {
      for (const path of ['/healthz', '/readyz']) {
        asked++;
        try {
          const res = await fetch(`http://127.0.0.1:${m.probePort}${path}`, {
            signal: AbortSignal.timeout(5000),
          });
          const body = await res.text();
          // The body names the check that failed (a readiness check's own deadline, say).
          if (res.status !== 200) failed.push(`${path}: ${res.status} ${body.slice(0, 300)}`);
        } catch (err) {
          failed.push(`${path}: ${(err as Error).message}`);
        }
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { failed, asked };
    },
  };
}

describe.each(['w1', 'bb1'])('a long line without a newline, on %s', (w) => {
  it('leaves the probes answering and another build whole, and is stored cut with a marker', async () => {
    const probes = probing(master);
    const long = await forced(`long-${w}`);
    // Once the long step is printing, another build on the same master.
    await waitFor(
      'the long step to start',
      async () => (await stepOf(long.buildid, 'long'))?.started_at != null,
    );
    const other = await forced(`other-${w}`);
    expect((await c.finished(other.buildid)).results).toBe(Results.SUCCESS);
    expect(await stdio(other.buildid, 'lines')).toContain(
      `${Array.from({ length: 300 }, (_, i) => `line ${i + 1}`).join('\n')}\n`,
    );
    expect((await c.finished(long.buildid)).results).toBe(Results.SUCCESS);
    const { failed, asked } = await probes.stop();
    expect(failed).toEqual([]);
    expect(asked).toBeGreaterThan(2);

    const text = await stdio(long.buildid, 'long');
    const xs = text.split('\n').filter((l) => l.startsWith('xxx'));
    expect(xs).toHaveLength(1);
    expect(Buffer.byteLength(xs[0]!)).toBeLessThan(65_536);
    const m = / … \[line cut: (\d+) bytes long, the first (\d+) kept\]$/.exec(xs[0]!)!;
    expect(m).not.toBeNull();
    expect(Number(m[1])).toBe(BYTES[w]);
    expect(xs[0]).toBe('x'.repeat(Number(m[2])) + m[0]);
    expect(text).toContain('\nafter\n');
  });

  it('fails a set_property step whose output is too long, setting nothing', async () => {
    const b = await c.finished((await forced(`prop-${w}`)).buildid);
    expect(b.results).toBe(Results.FAILURE);
    const step = await stepOf(b.buildid, 'too-long');
    expect(step.state_string).toBe(`property 'p' not set: output over ${MAX_OUTPUT} bytes`);
    expect(await stdio(b.buildid, 'too-long')).toContain(`stdout not kept: over ${MAX_OUTPUT} bytes`);
    const props = (await c.get(`/builds/${b.buildid}/properties`)).properties[0];
    expect(props.p).toBeUndefined();
  });
});
