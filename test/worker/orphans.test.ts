// A command dies with its agent, whatever killed the agent: a real worker process runs a
// step whose shell has forked a child of its own (the real work of a step usually is), the
// worker is killed with SIGKILL (so it runs no code on its way out), and neither the shell
// nor its child may go on running. And a command dies when its master goes silent (frozen,
// or cut off while the connection lingers): the cluster will run its request elsewhere.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import type { OutputStream } from '../../services/core/protocol/messages.js';
import { createLogger } from '../../services/core/telemetry/logger.js';
import { startWorkerServer, type WorkerServer } from '../../services/master/workers/flotilla/server.js';
import { type Relay, startRelay } from '../helpers/pg-proxy.js';
import { freePort, type Running, startService, status } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

const log = createLogger('test', 'silent');
const dir = mkdtempSync(join(tmpdir(), 'flotilla-orphans-'));
let server: WorkerServer;
// Every command's pids, so that a failing test leaves nothing running behind it.
const started: number[] = [];
// And every worker process, for the same reason (a test that times out never reaches its stop).
const workers: Running[] = [];

let relay: Relay;

beforeAll(async () => {
  // A worker that hears nothing from this master for half a second drops it and its commands.
  const config = parseMasterConfig('worker_silence_seconds: 0.5\nworkers: [{ name: w1, password: pw }]');
  server = await startWorkerServer({ host: '127.0.0.1', port: 0, config, masterName: 'm', log });
  relay = await startRelay('127.0.0.1', server.port);
});
afterAll(async () => {
  for (const pid of started.filter(alive)) process.kill(pid, 'SIGKILL');
  await Promise.all(workers.map((w) => w.stop('SIGKILL')));
  await relay?.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

// A zombie is dead too: it only waits for its parent to read its status.
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function startWorker(port = server.port): Promise<Running> {
  const probe = await freePort();
  const proc = startService(
    'worker',
    {
      MASTER_URL: `ws://127.0.0.1:${port}/worker`,
      WORKER_NAME: 'w1',
      WORKER_DIR: dir,
      PROBE_PORT: String(probe),
      LOG_LEVEL: 'silent',
    },
    { input: 'pw\n' },
  );
  workers.push(proc);
  await waitFor('the worker', async () => (await status(`http://127.0.0.1:${probe}/readyz`)) === 200, {
    proc,
  });
  return proc;
}

/** Start a step whose shell forks a child; the pids of both, once it has printed them. */
async function startStep(prefix = ''): Promise<number[]> {
  const w = server.get('w1')!;
  let out = '';
  const command = `${prefix}sleep 300 & echo "pids $$ $!"; wait`;
  void w.run({ command, workdir: 'b' }, async (s: OutputStream, text: string) => {
    if (s === 'o') out += text;
  });
  let pids: number[] = [];
  await waitFor('the step to print its pids', async () => {
    const m = /pids (\d+) (\d+)/.exec(out);
    if (m) pids = [Number(m[1]), Number(m[2])];
    return m !== null;
  });
  started.push(...pids);
  return pids;
}

describe('a worker killed with SIGKILL', () => {
  it('takes its commands, and what they started, with it', async () => {
    const worker = await startWorker();
    const pids = await startStep();
    expect(pids.map(alive)).toEqual([true, true]);
    await worker.stop('SIGKILL');
    await waitFor('the commands to die', async () => !pids.some(alive));
  });

  it('and so does a SIGTERM that the command ignores', async () => {
    const worker = await startWorker();
    // Ignored signals stay ignored across fork and exec: the shell's child ignores it too.
    const pids = await startStep("trap '' TERM; ");
    expect(await worker.stop('SIGTERM')).toBe(0);
    await waitFor('the commands to die', async () => !pids.some(alive));
  });
});

describe('a worker whose master goes silent', () => {
  it('kills its commands, and what they started', async () => {
    // Through a relay that can freeze the link both ways: the master stops answering.
    const worker = await startWorker(relay.port);
    try {
      const pids = await startStep();
      expect(pids.map(alive)).toEqual([true, true]);
      relay.freeze();
      await waitFor('the commands to die', async () => !pids.some(alive), { timeoutMs: 10_000 });
      expect(worker.child.exitCode).toBeNull();
    } finally {
      relay.restore();
      await worker.stop('SIGKILL');
    }
  });
});
