// Buildbot's own worker under a frozen master (issue 15): a real buildbot-worker 3.7 with
// Flotilla's silence guard in its buildbot.tac (deploy/buildbot-worker/silence-guard.py)
// connects through a Service-like relay to one of two masters. Its master is frozen
// (SIGSTOP) mid-command: the worker must see the connection end and stop that master's
// command, connect again to the live master, and the request must run again there once,
// never beside the frozen master's command. The command records its own start, ticks and
// end (load/chaos/job.sh), so "at once" is what the commands saw, not what Flotilla says.
// Then a guarded worker killed with SIGKILL mid-command: its command must die with it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { overlaps, readExecutions, rerunUnderWay, runningExecutions } from '../../load/chaos/records.js';
import { createBuildbotWorker, startBuildbotWorker } from '../helpers/buildbot-worker.js';
import { type Relay, startRelay } from '../helpers/pg-proxy.js';
import { freePort, type Running, status } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { Cluster, type MasterProc } from './cluster.js';

// E = 12 s: a heartbeat every 3 s; the workers' silence 3 s, which the guard is given too.
const SILENCE_SECONDS = 3;
// A build's first execution prints 200 batches of 10 lines, 0.2 s apart (about 40 s): the frozen
// master's command, if nothing stopped it, would still run when the live master reruns its
// request (after the expiry, 12 s, and the expiry job's period, 6 s). Its rerun (build 2)
// prints 20 batches (4 s): it only has to print every line, and a rerun of 40 s held the test
// 36 s longer. The shell works out the count from the build's number.
const LINES = '$(( %(prop:buildnumber)s == 1 ? 2000 : 200 ))';
const JOB = `${LINES} 10 0.2`;

let c: Cluster;
let dir: string;
let record: string;
let relay: Relay | undefined;
const masters: { m: MasterProc; msgpack: number }[] = [];
const frozen = new Set<Running>();

function config(): string {
  const job = resolve('load/chaos/job.sh');
  return [
    'title: a buildbot-worker under a frozen master',
    'www: { page_cache: { max_staleness_ms: 0 } }',
    'master_expiry_seconds: 12',
    `worker_silence_seconds: ${SILENCE_SECONDS}`,
    'protocols:',
    '  msgpack_experimental_v7: { port: 0 }',
    'workers:',
    '  - { name: bbf, password: bb-frozen }',
    '  - { name: bbk, password: bb-killed }',
    'builders:',
    '  - name: bb-frozen',
    '    workers: [bbf]',
    '    steps:',
    `      - { type: shell, name: print, command: "sh ${job} %(prop:token)s %(prop:buildnumber)s ${JOB} ${record}" }`,
    '  - name: bb-killed',
    '    workers: [bbk]',
    '    steps:',
    `      - { type: shell, name: print, command: "sh ${job} %(prop:token)s %(prop:buildnumber)s ${JOB} ${record}" }`,
    'force_schedulers:',
    '  - name: bb-frozen',
    '    builders: [bb-frozen]',
    '    properties: [{ type: string, name: token }]',
    '  - name: bb-killed',
    '    builders: [bb-killed]',
    '    properties: [{ type: string, name: token }]',
    '',
  ].join('\n');
}

function tail(file: string, chars: number): string {
  try {
    return readFileSync(file, 'utf8').slice(-chars);
  } catch (err) {
    return (err as Error).message;
  }
}

async function answers(m: MasterProc): Promise<boolean> {
  try {
    return (await status(`http://127.0.0.1:${m.probePort}/readyz`)) === 200;
  } catch {
    return false;
  }
}

async function startMaster(name: string): Promise<MasterProc> {
  const msgpack = await freePort();
  const m = await c.startMaster(name, { MSGPACK_WORKER_PORT: String(msgpack) });
  masters.push({ m, msgpack });
  return m;
}

async function masterid(name: string): Promise<number> {
  return (await c.get(`/masters?name=${name}`)).masters[0].masterid;
}

/** The masters the API says bbf is connected to (a frozen one stays listed until it is expired). */
async function connectedTo(): Promise<number[]> {
  const w = (await c.get('/workers?name=bbf')).workers[0];
  return (w?.connected_to ?? []).map((m: { masterid: number }) => m.masterid);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flotilla-bbw-frozen-'));
  record = join(dir, 'record.txt');
  c = await Cluster.start({ baseYaml: config() });
}, 120_000);
afterAll(async () => {
  for (const p of frozen) process.kill(p.pid, 'SIGCONT');
  await relay?.close();
  await c?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a buildbot-worker whose master froze', () => {
  it('drops it and its command, connects to the live master, and the request runs again there once', {
    timeout: 420_000,
  }, async () => {
    const a = await startMaster('bbf-a');
    // A Service in front of the masters: each new connection goes to the first master whose
    // readiness answers (a frozen one does not), as a Kubernetes Service drops a pod that
    // fails its readiness probe.
    relay = await startRelay('127.0.0.1', async () => {
      for (const { m, msgpack } of masters) if (!frozen.has(m.proc) && (await answers(m))) return msgpack;
      throw new Error('no master is ready');
    });
    const wdir = join(dir, 'bbf');
    createBuildbotWorker({
      dir: wdir,
      port: relay.port,
      name: 'bbf',
      password: 'bb-frozen',
      silenceGuard: SILENCE_SECONDS,
    });
    const worker = startBuildbotWorker(wdir);
    c.procs.push(worker);
    const aid = await masterid('bbf-a');
    await waitFor('bbf to connect to the first master', async () => (await connectedTo()).includes(aid), {
      proc: worker,
    });
    const b = await startMaster('bbf-b');

    const [, brids] = await c.force('bb-frozen', { token: 't1' });
    const brid = Object.values(brids)[0]!;
    await waitFor('the command under way', async () => readExecutions(record).some((e) => e.ticks >= 2), {
      proc: worker,
    });

    process.kill(a.proc.pid, 'SIGSTOP');
    frozen.add(a.proc);
    const bid = await masterid('bbf-b');
    // The worker tries again 1-60 s apart (Twisted's backoffPolicy, growing while its tries
    // fail to connect at all) and the relay turns it away while no master answers its
    // readiness: patient on a loaded machine.
    await waitFor('bbf to connect to the live master', async () => (await connectedTo()).includes(bid), {
      timeoutMs: 240_000,
      proc: worker,
    });
    // After the expiry (12 s), the expiry job's period (6 s), a claim and the worker's start of
    // the command: patient on a loaded machine, and a failure says where the rerun stopped.
    await waitFor('the request to run again, under way', async () => rerunUnderWay(record), {
      timeoutMs: 180_000,
      proc: worker,
    }).catch(async (err: Error) => {
      const masters = (await c.get('/masters').catch(() => ({ masters: [] }))).masters;
      const builds = (await c.get(`/buildrequests/${brid}/builds`).catch(() => ({ builds: [] }))).builds;
      const request = (await c.get(`/buildrequests/${brid}`).catch(() => ({ buildrequests: [] })))
        .buildrequests[0];
      err.message += `\nmasters: ${JSON.stringify(masters.map((m: any) => [m.name, m.active, m.last_active]))}`;
      err.message += `\nrequest: ${JSON.stringify(request)}\nbuilds: ${JSON.stringify(builds.map((x: any) => [x.buildid, x.masterid, x.workerid, x.results, x.state_string]))}`;
      err.message += `\nconnected to: ${JSON.stringify(await connectedTo().catch(() => []))}`;
      err.message += `\nexecutions: ${JSON.stringify(readExecutions(record))}`;
      err.message += `\nlive master's output (its end):\n${b.proc.output().slice(-6000)}`;
      err.message += `\nthe worker's log (its end):\n${tail(join(wdir, 'twistd.log'), 6000)}`;
      throw err;
    });
    // The frozen master wakes up to find itself expired: it must write nothing over the rerun.
    process.kill(a.proc.pid, 'SIGCONT');
    frozen.delete(a.proc);

    await waitFor(
      'the request to complete',
      async () => (await c.get(`/buildrequests/${brid}`)).buildrequests[0].complete === true,
      { proc: worker },
    );
    const request = (await c.get(`/buildrequests/${brid}`)).buildrequests[0];
    expect(request.results).toBe(0);
    const builds = (await c.get(`/buildrequests/${brid}/builds`)).builds;
    // The frozen master's build RETRY, the live master's SUCCESS; nothing else.
    expect(builds.map((x: any) => [x.masterid, x.results])).toEqual([
      [aid, 5],
      [bid, 0],
    ]);
    const executions = readExecutions(record);
    expect(executions).toHaveLength(2);
    expect(overlaps(executions)).toEqual([]);
    // The first was stopped short (killed: no record of its end), the rerun printed everything.
    expect(executions.map((e) => e.end === 'end')).toEqual([false, true]);
    expect(runningExecutions(record)).toEqual([]);
    expect(b.proc.child.exitCode).toBeNull();
  });
});

describe('a buildbot-worker killed with SIGKILL mid-command', () => {
  it("takes its command with it (the guard's reaper): the command never runs to its end", {
    timeout: 300_000,
  }, async () => {
    // The live master of the test above; a worker of its own, straight to it.
    const live = masters.find(({ m }) => m.name === 'bbf-b') ?? masters[0]!;
    const wdir = join(dir, 'bbk');
    createBuildbotWorker({
      dir: wdir,
      port: live.msgpack,
      name: 'bbk',
      password: 'bb-killed',
      silenceGuard: SILENCE_SECONDS,
    });
    const worker = startBuildbotWorker(wdir);
    c.procs.push(worker);
    await waitFor(
      'bbk to connect',
      async () => ((await c.get('/workers?name=bbk')).workers[0]?.connected_to ?? []).length > 0,
      { proc: worker },
    );
    await c.force('bb-killed', { token: 'k1' });
    const mine = () => readExecutions(record).filter((e) => e.token === 'k1');
    await waitFor('the command under way', async () => mine().some((e) => e.ticks >= 2), { proc: worker });
    await worker.stop('SIGKILL');
    // Without the reaper the command, in a process group of its own, would run on to its end
    // (about 40 s) with nobody reading its output.
    await waitFor(
      'no command of the killed worker running',
      async () => !runningExecutions(record).some((e) => e.token === 'k1'),
      { timeoutMs: 120_000 },
    );
    expect(mine().map((e) => e.end)).toEqual([null]);
  });
});
