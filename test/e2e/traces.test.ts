// Traces from real processes, exported over OTLP to a receiver in the test: a force request
// to the API, the build it causes on a master and the commands a worker runs for it are one
// trace (the context travels with the request's event through Redis, and with each command
// to the worker); a build is a span with a child per step, and the
// PostgreSQL queries and Redis commands made for it are its descendants; background jobs
// have their own spans.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { waitFor } from '../helpers/wait.js';
import { Cluster } from './cluster.js';

let c: Cluster;
let otlp: OtlpReceiver;
beforeAll(async () => {
  otlp = await OtlpReceiver.start();
  c = await Cluster.start({ apiEnv: otlp.env() });
  const m = await c.startMaster('m1', otlp.env());
  await c.startWorker('w1', m, otlp.env());
});
afterAll(async () => {
  await c?.stop();
  await otlp?.close();
});

/** Every span below `root` in its trace. */
function descendants(root: ReceivedSpan): ReceivedSpan[] {
  const inTrace = otlp.spans.filter((s) => s.traceId === root.traceId);
  const out: ReceivedSpan[] = [];
  const walk = (id: string) => {
    for (const s of inTrace.filter((x) => x.parentSpanId === id)) {
      out.push(s);
      walk(s.spanId);
    }
  };
  walk(root.spanId);
  return out;
}

describe('traces', () => {
  it('follow a force request from the API to the build it starts on a master', async () => {
    const [, brids] = await c.force('force-basic');
    const build = await c.buildOf(Object.values(brids)[0]!);
    let root: ReceivedSpan | undefined;
    let buildSpan: ReceivedSpan | undefined;
    await waitFor('the force request and its build in one trace', async () => {
      root = otlp.spans.find(
        (s) => s.service === 'flotilla-api' && s.name === 'POST /api/v2/forceschedulers/i:schedulername',
      );
      buildSpan = otlp.spans.find(
        (s) => s.name === 'build basic' && s.attributes['flotilla.buildid'] === build.buildid,
      );
      return root !== undefined && buildSpan !== undefined;
    });
    expect(buildSpan!.traceId).toBe(root!.traceId);
    expect(buildSpan!.parentSpanId).toBe(root!.spanId);
    // The API's own queries for the force are in the trace too.
    expect(
      descendants(root!).some(
        (s) =>
          s.service === 'flotilla-api' &&
          /postgres/.test(String(s.attributes['db.system'] ?? s.attributes['db.system.name'])),
      ),
    ).toBe(true);
    await c.finished(build.buildid);
  });

  it('show a build, its steps, and the queries and Redis commands made for it', async () => {
    const [, brids] = await c.force('force-basic');
    const build = await c.buildOf(Object.values(brids)[0]!);
    await c.finished(build.buildid);
    let root: ReceivedSpan | undefined;
    await waitFor('the build span', async () => {
      root = otlp.spans.find(
        (s) => s.name === 'build basic' && s.attributes['flotilla.buildid'] === build.buildid,
      );
      return root !== undefined;
    });
    expect(root!.service).toBe('flotilla-master');
    expect(root!.attributes).toMatchObject({ 'flotilla.builder': 'basic', 'flotilla.results': 'warnings' });
    let below: ReceivedSpan[] = [];
    await waitFor('its steps and their queries', async () => {
      below = descendants(root!);
      return below.filter((s) => s.name.startsWith('step ')).length === 6;
    });
    const steps = below.filter((s) => s.parentSpanId === root!.spanId && s.name.startsWith('step '));
    expect(steps.map((s) => s.name)).toEqual([
      'step lines',
      'step get-version',
      'step use-property',
      'step lint',
      'step never',
      'step unicode',
    ]);
    // lint fails, but only warns the build (warnOnFailure, not flunkOnFailure).
    expect(steps.find((s) => s.name === 'step lint')!.attributes['flotilla.results']).toBe('failure');
    // pg spans carry the statement kind; ioredis spans the command (the live log stream).
    expect(
      below.some(
        (s) => s.attributes['db.system'] === 'postgresql' || s.attributes['db.system.name'] === 'postgresql',
      ),
    ).toBe(true);
    expect(below.some((s) => /^(multi|xadd|exec|publish|evalsha)$/i.test(s.name))).toBe(true);
  });

  it("reach the worker: each step's commands are spans of the worker, below the step", async () => {
    const [, brids] = await c.force('force-basic');
    const build = await c.buildOf(Object.values(brids)[0]!);
    await c.finished(build.buildid);
    let root: ReceivedSpan | undefined;
    let commands: ReceivedSpan[] = [];
    await waitFor("the build's worker spans", async () => {
      root = otlp.spans.find(
        (s) => s.name === 'build basic' && s.attributes['flotilla.buildid'] === build.buildid,
      );
      commands = root ? descendants(root).filter((s) => s.service === 'flotilla-worker') : [];
      // lines, get-version, use-property, lint and unicode run a command; never is skipped.
      return commands.length >= 5;
    });
    const byId = new Map(otlp.spans.map((s) => [s.spanId, s]));
    for (const cmd of commands) {
      expect(cmd.name).toBe('worker command');
      expect(cmd.traceId).toBe(root!.traceId);
      expect(byId.get(cmd.parentSpanId!)?.name).toMatch(/^step /);
    }
    const lint = commands.find((s) => byId.get(s.parentSpanId!)?.name === 'step lint');
    expect(lint!.attributes['process.exit.code']).not.toBe(0);
  });

  it('show background jobs on their own', async () => {
    await waitFor('a compress-log job span', async () =>
      otlp.spans.some((s) => s.service === 'flotilla-master' && /compress-log/.test(s.name)),
    );
  });
});
