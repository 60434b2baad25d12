// Workers that do not play fair with file transfers, one per protocol, as a worker running
// someone else's code could: each speaks the protocol from the test's side, answers every
// command with rc 0, and for an upload of a path named `send-N` sends N bytes in 1 KiB blocks
// whatever maxsize it was told, without waiting for the master's answers, then says it went
// well. During a transfer of a path named `say-N` it says N characters on stderr, and a shell
// command with an argument ending `stdout-N` writes N characters to stdout, in 64 KiB pieces
// without waiting either. The msgpack one also asks a download for `readLength` bytes in one
// read. Each keeps what the master asked of it, to check what it was told.
import { randomBytes } from 'node:crypto';
import { decode } from '@msgpack/msgpack';
import WebSocket from 'ws';
import type { MasterToWorker, TransferRequest } from '../../../services/core/protocol/messages.js';
import type { Logger } from '../../../services/core/telemetry/logger.js';
import { encodeFrame } from '../../../services/master/workers/msgpack/messages.js';
import { connectToMaster, type MasterLink } from '../../../services/worker/connection.js';

const BLOCK = 1024;
const PIECE = 64 * 1024;

/** N for a text ending `<word>-N`, else 0. */
function counted(word: string, text: string): number {
  const m = new RegExp(`${word}-(\\d+)$`).exec(text);
  return m ? Number(m[1]) : 0;
}

/** The bytes an upload of this path sends: N for a path ending `send-N`. */
const toSend = (path: string) => counted('send', path);
/** The characters said on stderr during a transfer of this path. */
const toSay = (path: string) => counted('say', path);
/** The characters a shell command with these arguments writes to stdout. */
const toWrite = (argv: unknown) =>
  Array.isArray(argv) ? Math.max(0, ...argv.map((a) => counted('stdout', String(a)))) : 0;

/** N characters of text in pieces of at most PIECE. */
function pieces(n: number): string[] {
  const out: string[] = [];
  for (let at = 0; at < n; at += PIECE) out.push('x'.repeat(Math.min(PIECE, n - at)));
  return out;
}

function blocks(n: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < n; at += BLOCK) out.push(randomBytes(Math.min(BLOCK, n - at)));
  return out;
}

const OK = { rc: 0, signal: null, interrupted: false, timedOut: false, elapsedSeconds: 0 };

/** A Flotilla agent that sends what it likes (services/core/protocol/messages.ts). */
export function hostileAgent(opts: { url: string; name: string; password: string; log: Logger }) {
  const asked: TransferRequest[] = [];
  let link: MasterLink | undefined;
  let seq = 0;
  const say = (cmd: string, stream: 'o' | 'e', n: number) => {
    for (const text of pieces(n)) link?.send({ type: 'output', cmd, seq: ++seq, stream, text });
  };
  const message = (m: MasterToWorker) => {
    if (m.type === 'start') {
      say(m.cmd, 'o', toWrite(m.request.command));
      link?.send({ type: 'done', cmd: m.cmd, outcome: OK });
    }
    if (m.type !== 'transfer') return;
    asked.push(m.request);
    say(m.cmd, 'e', toSay(m.request.path));
    if (m.request.op !== 'download') {
      for (const b of blocks(toSend(m.request.path)))
        link?.send({ type: 'data', cmd: m.cmd, seq: ++seq, data: b.toString('base64') });
    }
    link?.send({ type: 'done', cmd: m.cmd, outcome: OK });
  };
  link = connectToMaster({ ...opts, handlers: { message, lost: () => {}, shutdown: () => {} } });
  return { asked, close: () => link!.close() };
}

type Msg = Record<string, unknown> & { op: string; seq_number: number };

/** A buildbot-worker's protocol (msgpack_experimental_v7), spoken to the letter and not in spirit. */
export function hostileBbw(opts: {
  port: number;
  name: string;
  password: string;
  basedir: string;
  readLength: number;
}) {
  const asked: { name: string; args: Record<string, unknown> }[] = [];
  /** What the master answered each of the download's reads: its length, or its error. */
  const reads: (number | string)[] = [];
  const auth = Buffer.from(`${opts.name}:${opts.password}`).toString('base64');
  const ws = new WebSocket(`ws://127.0.0.1:${opts.port}/`, { headers: { Authorization: `Basic ${auth}` } });
  let seq = 0;
  const waiting = new Map<number, (m: Msg) => void>();
  const send = (m: Record<string, unknown>) => {
    const seq_number = seq++;
    ws.send(encodeFrame({ ...m, seq_number }));
    return new Promise<Msg>((resolve) => waiting.set(seq_number, resolve));
  };
  const answer = (seq_number: number, result: unknown) =>
    ws.send(encodeFrame({ op: 'response', seq_number, result }));

  const run = async (id: string, name: string, args: Record<string, unknown>) => {
    const path = String(args.path ?? '');
    const values: [string, unknown][] = name === 'listdir' ? [['files', []]] : [];
    const said = name === 'shell' ? ['stdout', toWrite(args.command)] : ['stderr', toSay(path)];
    for (const text of pieces(said[1] as number))
      void send({ op: 'update', command_id: id, args: [[said[0], [text, [], []]]] });
    if (name === 'upload_file' || name === 'upload_directory') {
      const op = name === 'upload_file' ? 'update_upload_file_write' : 'update_upload_directory_write';
      for (const b of blocks(toSend(path))) void send({ op, command_id: id, args: b });
      void send({
        op: name === 'upload_file' ? 'update_upload_file_close' : 'update_upload_directory_unpack',
        command_id: id,
      });
    }
    if (name === 'download_file') {
      const r = await send({ op: 'update_read_file', command_id: id, length: opts.readLength });
      reads.push(r.is_exception ? String(r.result) : (r.result as Uint8Array).length);
      await send({ op: 'update_read_file_close', command_id: id });
    }
    void send({ op: 'update', command_id: id, args: [...values, ['rc', 0]] });
    void send({ op: 'complete', command_id: id, args: null });
  };

  ws.on('message', (data) => {
    const m = decode(data as Buffer) as Msg;
    if (m.op === 'response') {
      waiting.get(m.seq_number)?.(m);
      waiting.delete(m.seq_number);
    } else if (m.op === 'get_worker_info')
      answer(m.seq_number, { basedir: opts.basedir, system: 'posix', version: 'hostile' });
    else if (m.op === 'start_command') {
      answer(m.seq_number, null);
      const args = m.args as Record<string, unknown>;
      asked.push({ name: String(m.command_name), args });
      void run(String(m.command_id), String(m.command_name), args);
    } else answer(m.seq_number, null);
  });
  return { asked, reads, close: () => ws.close() };
}
