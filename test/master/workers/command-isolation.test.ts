// A worker cannot reach another worker's commands (issue 28's review: it held). On each
// protocol, worker A runs a command for the master, and worker B, told A's command id (the
// strongest case: ids are random, B would have to guess), sends output and an end for it.
// The master takes nothing of B's: A's command keeps running, its output is A's alone, and
// it ends as A says. B's frames are known to be handled before A ends its command: B waits
// for the master's answer to them (a pong, on Flotilla's protocol, which ws sends after the
// frames before it; the response to `complete` on msgpack_experimental_v7). And a
// buildbot-worker's updates keep only the values the master reads: a worker naming a new
// key in each update cannot grow a command's state without end.
import { decode } from '@msgpack/msgpack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { CommandEnd, WorkerConnection } from '../../../services/master/workers/connection.js';
import type { WorkerListeners } from '../../../services/master/workers/listen.js';
import type { MsgpackWorkerConnection } from '../../../services/master/workers/msgpack/connection.js';
import { encodeFrame } from '../../../services/master/workers/msgpack/messages.js';
import { waitFor } from '../../helpers/wait.js';
import { hello, startListeners } from './lib.js';

let listeners: WorkerListeners;
const connected = new Map<string, WorkerConnection>();

beforeAll(async () => {
  listeners = await startListeners(['fa', 'fb', 'ma', 'mb', 'mc'], {
    connected: (w) => connected.set(w.name, w),
  });
});
afterAll(() => listeners?.close());

/** A Flotilla-protocol worker: its socket, and the command ids the master started on it. */
async function flotillaWorker(name: string) {
  const ws = new WebSocket(`ws://127.0.0.1:${listeners.ports.flotilla}/worker`);
  const started: string[] = [];
  ws.on('open', () => ws.send(hello(name, `p${name}`)));
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.type === 'start') started.push(m.cmd);
  });
  await waitFor(`${name} connected`, () => connected.has(name));
  const send = (m: Record<string, unknown>) => ws.send(JSON.stringify(m));
  return { ws, started, send };
}

/** A msgpack_experimental_v7 worker that answers the handshake and ends any command but `shell`. */
async function msgpackWorker(name: string) {
  const auth = Buffer.from(`${name}:p${name}`).toString('base64');
  const ws = new WebSocket(`ws://127.0.0.1:${listeners.ports.msgpack_experimental_v7}/`, {
    headers: { Authorization: `Basic ${auth}` },
  });
  const started: string[] = [];
  const waiting = new Map<number, () => void>();
  let seq = 0;
  const send = (m: Record<string, unknown>) => {
    const seq_number = seq++;
    ws.send(encodeFrame({ ...m, seq_number }));
    return new Promise<void>((resolve) => waiting.set(seq_number, resolve));
  };
  const answer = (seq_number: number, result: unknown) =>
    ws.send(encodeFrame({ op: 'response', seq_number, result }));
  ws.on('message', (data) => {
    const m = decode(data as Buffer) as Record<string, unknown> & { op: string; seq_number: number };
    if (m.op === 'response') waiting.get(m.seq_number)?.();
    else if (m.op === 'get_worker_info')
      answer(m.seq_number, { basedir: '/w', system: 'posix', version: 'test' });
    else if (m.op === 'start_command') {
      answer(m.seq_number, null);
      const id = String(m.command_id);
      if (m.command_name === 'shell') started.push(id);
      else {
        void send({
          op: 'update',
          command_id: id,
          args: [
            ['files', []],
            ['rc', 0],
          ],
        });
        void send({ op: 'complete', command_id: id, args: null });
      }
    } else answer(m.seq_number, null);
  });
  await waitFor(`${name} connected`, () => connected.has(name));
  return { ws, started, send };
}

const OUTCOME = { signal: null, interrupted: false, timedOut: false, elapsedSeconds: 0 };

/** Runs `true` on `name`'s connection; what reached the sink, and how it ended (once it has). */
function runOn(name: string) {
  const out: string[] = [];
  let end: CommandEnd | undefined;
  const done = connected
    .get(name)!
    .run({ command: ['true'], workdir: 'build' }, async (stream, text) => {
      out.push(`${stream}:${text}`);
    })
    .then((e) => {
      end = e;
      return e;
    });
  return { out, done, ended: () => end };
}

describe("a worker that sends frames for another worker's command", () => {
  it("is ignored on Flotilla's protocol", async () => {
    const a = await flotillaWorker('fa');
    const b = await flotillaWorker('fb');
    const run = runOn('fa');
    await waitFor('the command to start on fa', () => a.started.length === 1);
    const cmd = a.started[0]!;

    b.send({ type: 'output', cmd, seq: 1, stream: 'o', text: 'from b\n' });
    b.send({ type: 'done', cmd, outcome: { ...OUTCOME, rc: 99 } });
    await new Promise((resolve) => {
      b.ws.once('pong', resolve);
      b.ws.ping();
    });
    expect(run.ended()).toBeUndefined();
    expect(run.out).toEqual([]);

    a.send({ type: 'output', cmd, seq: 1, stream: 'o', text: 'from a\n' });
    a.send({ type: 'done', cmd, outcome: { ...OUTCOME, rc: 0 } });
    expect(await run.done).toMatchObject({ rc: 0 });
    expect(run.out).toEqual(['o:from a\n']);
    // B broke no rule of the protocol: its frames named a command it does not have.
    expect(b.ws.readyState).toBe(WebSocket.OPEN);
    a.ws.close();
    b.ws.close();
  });

  it('is ignored on msgpack_experimental_v7', async () => {
    const a = await msgpackWorker('ma');
    const b = await msgpackWorker('mb');
    const run = runOn('ma');
    await waitFor('the command to start on ma', () => a.started.length === 1);
    const id = a.started[0]!;

    await b.send({
      op: 'update',
      command_id: id,
      args: [
        ['stdout', ['from b\n', [6], [0]]],
        ['rc', 99],
      ],
    });
    await b.send({ op: 'complete', command_id: id, args: null });
    expect(run.ended()).toBeUndefined();
    expect(run.out).toEqual([]);

    await a.send({
      op: 'update',
      command_id: id,
      args: [
        ['stdout', ['from a\n', [6], [0]]],
        ['rc', 0],
      ],
    });
    await a.send({ op: 'complete', command_id: id, args: null });
    expect(await run.done).toMatchObject({ rc: 0 });
    // After A's output, the master's own header lines (the exit code); nothing of B's.
    expect(run.out[0]).toBe('o:from a\n');
    expect(run.out.join('')).not.toContain('from b');
    a.ws.close();
    b.ws.close();
  });
});

describe('a buildbot-worker that sends values the master does not read', () => {
  it('has them dropped: a command keeps only its own values', async () => {
    const w = await msgpackWorker('mc');
    const conn = connected.get('mc') as MsgpackWorkerConnection;
    const result = conn.command('shell', { command: ['true'] });
    await waitFor('the command to start on mc', () => w.started.length === 1);
    const id = w.started[0]!;
    const junk = Array.from({ length: 1000 }, (_, i): [string, unknown] => [`k${i}`, 'x'.repeat(1024)]);
    for (let i = 0; i < 10; i++) await w.send({ op: 'update', command_id: id, args: junk });
    await w.send({
      op: 'update',
      command_id: id,
      args: [
        ['rc', 0],
        ['elapsed', 0.5],
      ],
    });
    await w.send({ op: 'complete', command_id: id, args: null });
    const r = await result;
    expect(r.rc).toBe(0);
    expect([...r.values.keys()].sort()).toEqual(['elapsed', 'rc']);
    w.ws.close();
  });
});
