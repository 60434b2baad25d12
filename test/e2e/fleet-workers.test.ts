// The generated workers of load/fleet/workers.ts against services/worker's agent: one build of
// the same builder (one shell step running `true`) on each, against the same real master,
// and what the master stored of the two compared: the build's and the step's results and
// state strings, the logs, and their text stream by stream. Only what differs between any
// two runs of the agent is set aside: the environment's values, the elapsed time, and the
// worker's own name and directory. Fails if the fleet's hello, output batches or outcome stopped
// being what the agent sends (the master would store other text, or no build at all), or if
// a command the fleet holds ends before it is released.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkerFleet } from '../../load/fleet/workers.js';
import { waitFor } from '../helpers/wait.js';
import { Cluster, type MasterProc } from './cluster.js';

let c: Cluster;
let master: MasterProc;

beforeAll(async () => {
  c = await Cluster.start({ config: { force_schedulers: [{ name: 'force-quick', builders: ['quick'] }] } });
  master = await c.startMaster('fleet-check');
}, 180_000);
afterAll(async () => {
  await c?.stop();
});

/** What the master stored of a build, with its worker's own differences taken out. */
async function stored(buildid: number, worker: string, basedir: string) {
  const build = (await c.get(`/builds/${buildid}`)).builds[0];
  const steps = (await c.get(`/builds/${buildid}/steps`)).steps;
  const out = [];
  for (const s of steps) {
    const logs = [];
    for (const l of (await c.get(`/steps/${s.stepid}/logs`)).logs) {
      const content: string = (await c.get(`/logs/${l.logid}/contents`)).logchunks
        .map((ch: { content: string }) => ch.content)
        .join('');
      const lines = content
        .split('\n')
        .filter((line) => !line.startsWith('h  ')) // the environment's entries
        .map((line) => line.replaceAll(basedir, '<basedir>').replace(/^helapsedTime=.*/, 'helapsedTime=…'));
      logs.push({ name: l.name, slug: l.slug, type: l.type, complete: l.complete, lines });
    }
    out.push({
      name: s.name,
      number: s.number,
      results: s.results,
      state: s.state_string.replace(worker, '<worker>'),
      logs,
    });
  }
  return { results: build.results, state: build.state_string, steps: out };
}

async function buildOn(worker: string): Promise<number> {
  const [, brids] = await c.force('force-quick', { reason: 'fleet check' });
  const build = await c.buildOf(Object.values(brids)[0]!);
  const done = await c.finished(build.buildid);
  const workers = (await c.get('/workers')).workers as { workerid: number; name: string }[];
  expect(workers.find((w) => w.workerid === done.workerid)?.name).toBe(worker);
  return done.buildid;
}

describe('a generated worker', () => {
  it('makes the master store what the real agent makes it store for a `true` step', async () => {
    // The real agent first, alone on the builder.
    const agent = await c.startWorker('q1', master);
    const real = await stored(await buildOn('q1'), 'q1', join(c.dir, 'q1'));
    await agent.stop('SIGTERM');
    await waitFor('q1 gone', async () =>
      (await c.get('/workers')).workers.every((w: any) => w.name !== 'q1' || w.connected_to.length === 0),
    );

    const basedir = join(c.dir, 'q2');
    const commands: string[] = [];
    const fleet = new WorkerFleet({
      workers: [
        { name: 'q2', password: Cluster.password('q2'), url: `ws://127.0.0.1:${master.workerPort}/worker` },
      ],
      basedir,
      env: { PATH: '/usr/bin:/bin' },
      onCommand: (w, request) => commands.push(`${w}: ${String(request.command)}`),
    });
    try {
      fleet.start();
      await waitFor('the fleet welcomed', () => fleet.connected === 1);
      const generated = await stored(await buildOn('q2'), 'q2', basedir);
      expect(commands).toEqual(['q2: true']);
      expect(generated).toEqual(real);
      // Something to compare: a successful build whose stdio holds the header and the exit.
      expect(real.results).toBe(0);
      const stdio = real.steps.flatMap((s) => s.logs).find((l) => l.name === 'stdio');
      expect(stdio?.lines).toContain('hprogram finished with exit code 0');
      expect(stdio?.lines).toContain("h argv: b'true'");

      // Held (phase S of load/fleet/run.ts, a step that runs longer than the window): the
      // command gets no answer until release(), then the same one as before.
      fleet.holding = true;
      const [, brids] = await c.force('force-quick', { reason: 'fleet hold' });
      const held = await c.buildOf(Object.values(brids)[0]!);
      await waitFor('the held command', () => commands.length === 2);
      expect((await c.get(`/builds/${held.buildid}`)).builds[0].results).toBeNull();
      expect(fleet.release()).toEqual({ sent: 1, dropped: 0 });
      expect((await c.finished(held.buildid)).results).toBe(0);
      expect(await stored(held.buildid, 'q2', basedir)).toEqual(real);
    } finally {
      await fleet.close();
    }
  }, 180_000);
});
