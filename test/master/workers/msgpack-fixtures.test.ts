// The msgpack protocol against the traffic recorded between a real Buildbot 3.7 master and
// buildbot-worker 3.7 (test/fixtures/buildbot-msgpack, made by its capture/capture.sh):
// every frame the worker sent parses, and a scripted worker that answers with the recorded
// frames sees this master ask what Buildbot's asked, in the same order, and gets the same
// output out of the same updates.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decode } from '@msgpack/msgpack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { OutputStream } from '../../../services/core/protocol/messages.js';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import { encodeFrame, parseWorkerFrame } from '../../../services/master/workers/msgpack/messages.js';
import {
  type MsgpackWorkerServer,
  startMsgpackWorkerServer,
  WORKER_SETTINGS,
} from '../../../services/master/workers/msgpack/server.js';
import { waitFor } from '../../helpers/wait.js';

type Msg = Record<string, unknown>;
interface Entry {
  dir: string;
  binary?: boolean;
  msg?: Msg;
  headers?: Record<string, string>;
}

const FIXTURES = join(import.meta.dirname, '../../fixtures/buildbot-msgpack');
const traffic: Entry[] = readFileSync(join(FIXTURES, 'traffic.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l));

/** The recorded JSON form back into msgpack values ({"$bin": base64} is bytes). */
function revive(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(revive);
  if (v !== null && typeof v === 'object') {
    const o = v as Msg;
    if (typeof o.$bin === 'string' && Object.keys(o).length === 1) return Buffer.from(o.$bin, 'base64');
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, revive(x)]));
  }
  return v;
}

const fromWorker = traffic.filter((e) => e.dir === 'w2m').map((e) => revive(e.msg) as Msg);
const fromMaster = traffic.filter((e) => e.dir === 'm2w').map((e) => revive(e.msg) as Msg);
const requests = fromMaster.filter((m) => m.op !== 'response' && m.op !== 'keepalive');
/** The answer the recorded worker gave to the recorded master's request `m`. */
const answerTo = (m: Msg) => fromWorker.find((w) => w.op === 'response' && w.seq_number === m.seq_number);
/** The recorded worker's reports about one recorded command. */
const reportsOf = (id: string) => fromWorker.filter((w) => w.op !== 'response' && w.command_id === id);

describe('recorded frames', () => {
  it('every frame the worker sent parses, and keeps its op', () => {
    expect(fromWorker.length).toBeGreaterThan(50);
    for (const m of fromWorker) {
      const f = parseWorkerFrame(encodeFrame(m));
      expect(f, JSON.stringify(m).slice(0, 200)).not.toBeNull();
      expect(f!.op).toBe(m.op);
    }
  });

  it('the recording covers every command Flotilla uses', () => {
    const names = new Set(requests.filter((m) => m.op === 'start_command').map((m) => m.command_name));
    for (const n of [
      'shell',
      'listdir',
      'mkdir',
      'rmdir',
      'stat',
      'glob',
      'cpdir',
      'upload_file',
      'upload_directory',
      'download_file',
    ])
      expect(names).toContain(n);
    const ops = new Set(requests.map((m) => m.op));
    for (const o of ['print', 'get_worker_info', 'set_worker_settings', 'interrupt_command', 'shutdown'])
      expect(ops).toContain(o);
    expect(fromMaster.some((m) => m.op === 'keepalive')).toBe(true);
  });
});

describe('a scripted worker answering as the recorded one did', () => {
  const log = createLogger('test', 'silent');
  let server: MsgpackWorkerServer;
  let ws: WebSocket;
  const asked: Msg[] = [];
  let seq = 0;

  beforeAll(async () => {
    server = await startMsgpackWorkerServer({
      host: '127.0.0.1',
      port: 0,
      passwords: new Map([['capture-worker', 'capture-pass']]),
      builderDirs: () => ['shell', 'files', 'long'],
      log,
    });
    const upgrade = traffic.find((e) => e.dir === 'upgrade')!;
    ws = new WebSocket(`ws://127.0.0.1:${server.port}/`, {
      headers: { Authorization: upgrade.headers!.authorization! },
    });
    const send = (m: Msg) => ws.send(encodeFrame(m));
    ws.on('message', (data) => {
      const m = decode(data as Buffer) as Msg;
      if (m.op === 'response') return;
      asked.push(m);
      if (m.op === 'start_command') {
        // Replay the first recorded command of this name under the id this master chose.
        const rec = requests.find((r) => r.command_name === m.command_name && !r.used)!;
        rec.used = true;
        send({ op: 'response', seq_number: m.seq_number, result: null });
        for (const r of reportsOf(rec.command_id as string))
          send({ ...r, command_id: m.command_id, seq_number: seq++ });
        return;
      }
      const rec = requests.find((r) => r.op === m.op);
      send({
        op: 'response',
        seq_number: m.seq_number,
        result: rec ? (answerTo(rec)?.result ?? null) : null,
      });
    });
    await waitFor('the scripted worker to attach', async () => server.get('capture-worker') !== undefined);
  });
  afterAll(async () => {
    ws?.close();
    await server?.close();
  });

  it('is asked what Buildbot asked before the first build, in order', () => {
    const recorded = requests.slice(0, 5);
    expect(asked.map((m) => m.op)).toEqual(recorded.map((m) => m.op));
    expect(asked[2]).toMatchObject({ op: 'set_worker_settings', args: WORKER_SETTINGS });
    expect(recorded[2]).toMatchObject({ args: { newline_re: WORKER_SETTINGS.newline_re } });
    expect(asked[3]).toMatchObject({ command_name: 'listdir', args: recorded[3]!.args });
    expect(asked[4]).toMatchObject({ command_name: 'mkdir', args: recorded[4]!.args });
    const conn = server.get('capture-worker')!;
    expect(conn.info).toEqual({
      admin: 'capture admin <admin@example.org>\n',
      host: 'capture host\n',
      access_uri: '',
      version: '3.7.0-2',
    });
  });

  it('turns the recorded updates of a shell command into the same output', async () => {
    const conn = server.get('capture-worker')!;
    const out: Record<OutputStream, string> = { o: '', e: '', h: '' };
    const end = await conn.run({ command: 'recorded', workdir: 'shell/build' }, async (s, t) => {
      out[s] += t;
    });
    const shell = requests.find((r) => r.command_name === 'shell')!;
    const pieces = (key: string) =>
      reportsOf(shell.command_id as string)
        .filter((r) => r.op === 'update')
        .flatMap((r) => (r.args as [string, unknown][]).filter(([k]) => k === key))
        .map(([, v]) => (v as [string])[0])
        .join('');
    expect(end).toMatchObject({ rc: 0, interrupted: false });
    expect(out.o).toBe(pieces('stdout'));
    expect(out.o).toBe('out1\nno newline\n');
    expect(out.e).toBe('err1\n');
    // The worker's headers, but the rc line before its elapsedTime, as Buildbot 3.7's master
    // writes them (issue 30 §3).
    const header = pieces('header');
    const elapsed = /elapsedTime=[^\n]*\n$/.exec(header)![0];
    expect(out.h).toBe(`${header.slice(0, -elapsed.length)}program finished with exit code 0\n${elapsed}`);
    const start = asked.find((m) => m.command_name === 'shell')!;
    expect(start.args).toMatchObject({
      command: 'recorded',
      workdir: '/srv/capture/worker/shell/build',
      want_stdout: true,
      want_stderr: true,
    });
    expect(Object.keys(start.args as Msg).sort()).toEqual(Object.keys(shell.args as Msg).sort());
  });
});
