// The master-worker command protocol end to end, over a real WebSocket: output arrives
// complete and in order, is acknowledged only after it was stored (a slow store holds the
// command back instead of piling output up), commands can be interrupted, and a worker
// that goes away loses its commands.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import type { OutputStream } from '../../services/core/protocol/messages.js';
import { createLogger } from '../../services/core/telemetry/logger.js';
import type { CommandEnd } from '../../services/master/workers/connection.js';
import type { FlotillaConnection } from '../../services/master/workers/flotilla/connection.js';
import { startWorkerServer, type WorkerServer } from '../../services/master/workers/flotilla/server.js';
import { Agent, WINDOW_BYTES } from '../../services/worker/agent.js';
import { connectToMaster, type MasterLink } from '../../services/worker/connection.js';
import { waitFor } from '../helpers/wait.js';

const log = createLogger('test', 'silent');
const dir = mkdtempSync(join(tmpdir(), 'flotilla-proto-'));
let server: WorkerServer;
let link: MasterLink;
let agent: Agent;

async function connectWorker(): Promise<FlotillaConnection> {
  agent = new Agent(dir, (m) => link.send(m), log);
  link = connectToMaster({
    url: `ws://127.0.0.1:${server.port}/worker`,
    name: 'w1',
    password: 'pw',
    log,
    handlers: { message: (m) => agent.handle(m), lost: () => agent.lost(), shutdown: () => {} },
  });
  await waitFor('the worker to connect', () => server.get('w1') !== undefined);
  return server.get('w1')!;
}

beforeAll(async () => {
  const config = parseMasterConfig('workers: [{ name: w1, password: pw }]');
  server = await startWorkerServer({ host: '127.0.0.1', port: 0, config, masterName: 'm', log });
  await connectWorker();
});
afterAll(async () => {
  await link?.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

function store(delayMs = 0) {
  const parts: [OutputStream, string][] = [];
  const sink = async (s: OutputStream, t: string) => {
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    parts.push([s, t]);
  };
  return {
    sink,
    parts,
    text: (s: OutputStream) =>
      parts
        .filter(([x]) => x === s)
        .map(([, t]) => t)
        .join(''),
  };
}

describe('commands over the worker protocol', () => {
  it('deliver all output, in order, and the exit code', async () => {
    const w = server.get('w1')!;
    const out = store();
    const end = await w.run({ command: 'seq 1 100000; echo err >&2; exit 4', workdir: 'b1' }, out.sink);
    expect(end).toMatchObject({ rc: 4, interrupted: false });
    const lines = out.text('o').split('\n');
    expect(lines).toHaveLength(100001);
    expect(lines.slice(0, 3)).toEqual(['1', '2', '3']);
    expect(lines[99999]).toBe('100000');
    expect(out.text('e')).toBe('err\n');
    expect(out.parts[0]![0]).toBe('h');
    expect(out.parts.at(-1)![1]).toMatch(/elapsedTime=/);
  });

  it('hold the command back while output waits for a slow store (nothing is lost)', async () => {
    const w = server.get('w1')!;
    const out = store(20);
    // 8 MiB of output against a 1 MiB window and a store that takes 20 ms per batch.
    let maxPending = 0;
    const sampler = setInterval(() => {
      maxPending = Math.max(maxPending, w.pendingOutputBytes);
    }, 5);
    const end = await w.run(
      { command: 'head -c 8388608 /dev/zero | tr "\\0" "x" | fold -w 1023', workdir: 'b1' },
      out.sink,
    );
    clearInterval(sampler);
    expect(end).toMatchObject({ rc: 0 });
    // The master never holds more unstored output than the worker's window, plus what can be
    // on its way when the worker pauses: the batch being filled and one pipe read, each at most
    // a batch (32 KiB) and a read (64 KiB). Without the window it would be all 8 MiB.
    expect(maxPending).toBeGreaterThan(0);
    expect(maxPending).toBeLessThanOrEqual(WINDOW_BYTES + 2 * (32 * 1024 + 64 * 1024));
    const text = out.text('o');
    expect(text.replace(/\n/g, '').length).toBe(8388608);
    expect(text.split('\n').every((l) => l.length === 1023 || l.length === 8388608 % 1023)).toBe(true);
  });

  it('interrupt a running command', async () => {
    const w = server.get('w1')!;
    const out = store();
    const stop = new AbortController();
    const done = w.run({ command: 'echo started; sleep 30', workdir: 'b1' }, out.sink, stop.signal);
    await waitFor('the command to start', () => out.text('o') !== '');
    stop.abort('test says stop');
    const end = (await done) as Extract<CommandEnd, { rc: number | null }>;
    expect(end.interrupted).toBe(true);
    expect(out.text('h')).toMatch(/killing command: test says stop/);
  });

  it('refuse a work directory outside the worker', async () => {
    const out = store();
    const end = await server.get('w1')!.run({ command: 'true', workdir: '../../etc' }, out.sink);
    expect(end).toMatchObject({ rc: -1 });
    expect(out.text('h')).toMatch(/outside the worker's directory/);
  });

  it('lose the commands of a worker that goes away, and kill them on the worker', async () => {
    const w = server.get('w1')!;
    const out = store();
    const done = w.run({ command: 'echo $$; exec sleep 30', workdir: 'b1' }, out.sink);
    await waitFor('the command to start', () => out.text('o') !== '');
    const pid = Number(out.text('o').trim());
    await link.close();
    expect(await done).toEqual({ lost: true, reason: 'worker disconnected' });
    expect(w.lost.aborted).toBe(true);
    await waitFor('the worker to stop the command', () => agent.running === 0);
    expect(() => process.kill(pid, 0)).toThrow();
    await connectWorker();
  });
});
