// One buildbot-worker connected over msgpack_experimental_v7, as the master's build runner
// sees it: a WorkerConnection (../connection.ts) like a Flotilla agent's, and command() for
// the worker's other commands (./commands.ts: directories, stat, glob, listdir, transfers).
// This file holds the link: requests and their answers, the commands it started and the
// updates routed to them; what one kind of command asks and makes of its end is in
// ./shell.ts and ./transfers.ts (through ./command-start.ts).
//
// Durability: an update is answered only after its output went through the sink, in order,
// as Buildbot's master answers only after storing it. buildbot-worker does not wait for
// those answers, so it cannot be slowed down by them; instead, while more than
// PAUSE_BYTES of output await storing, the master stops reading the socket, and TCP holds the
// worker back. What the worker sent and the master had not stored when it died is lost: see
// docs/migrating-from-buildbot.md.
import { randomBytes } from 'node:crypto';
import type { WebSocket } from 'ws';
import { closeReason } from '../../../core/http/close-reason.js';
import type { OutputStream } from '../../../core/protocol/messages.js';
import { CloseCode } from '../../../core/protocol/messages.js';
import { commandText } from '../command-text.js';
import { MAX_READ_BYTES } from '../connection.js';
import type { CommandHandlers, RawEnd } from './command-start.js';
import {
  type BuildbotWorkerInfo,
  encodeFrame,
  lineInfo,
  type MasterOp,
  type WorkerFrame,
  type WorkerOp,
} from './messages.js';
import { BuildbotWorkerLink, READ_VALUES } from './worker-link.js';

/** How long a shutdown waits for the worker's answer before it closes the link anyway. */
const SHUTDOWN_ANSWER_MS = 5_000;
const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/** The worker answered a request with an error (`is_exception`). */
export class RemoteWorkerError extends Error {
  override name = 'RemoteWorkerError';
}
export class ConnectionLostError extends Error {
  override name = 'ConnectionLostError';
}

/** How a command other than a shell ended: the values its updates carried (rc, files, stat...). */
export interface CommandResult {
  rc: number | null;
  values: ReadonlyMap<string, unknown>;
  /** The worker's exception, when the command failed inside the worker. */
  failure: string | null;
  /** What the command wrote to its header and stderr (a reason when rc is not 0). */
  text: string;
}

interface Command {
  handlers: CommandHandlers;
  values: Map<string, unknown>;
  /** Everything about one command is handled strictly in order. */
  chain: Promise<void>;
  failed: Error | null;
  resolve: (end: RawEnd) => void;
}

const STREAMS: Record<string, OutputStream> = { stdout: 'o', stderr: 'e', header: 'h' };

export class MsgpackWorkerConnection extends BuildbotWorkerLink {
  readonly protocol = 'msgpack_experimental_v7';
  private seq = 0;
  // buildbot-worker keeps its running commands by id across connections (its bot outlives a
  // connection, and so do its commands), so ids must not repeat on a worker's next
  // connection: a random prefix per connection, then a counter.
  private readonly idPrefix = randomBytes(4).toString('hex');
  private nextCommand = 0;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly commands = new Map<string, Command>();

  constructor(
    readonly name: string,
    private readonly socket: WebSocket,
  ) {
    super();
  }

  /** Commands started and not yet complete. */
  get running(): number {
    return this.commands.size;
  }

  protected pauseReading(): void {
    this.socket.pause();
  }

  protected resumeReading(): void {
    this.socket.resume();
  }

  private send(m: Record<string, unknown>): void {
    if (this.connected) this.socket.send(encodeFrame(m));
  }

  private respond(seq: number, result: unknown, error?: string): void {
    this.send(
      error === undefined
        ? { op: 'response', seq_number: seq, result }
        : { op: 'response', seq_number: seq, result: error, is_exception: true },
    );
  }

  /** Send a request and wait for its answer (rejects with the worker's error, or on loss). */
  call(m: MasterOp): Promise<unknown> {
    if (!this.connected) return Promise.reject(new ConnectionLostError(this.lostReason));
    const seq = this.seq++;
    return new Promise((resolve, reject) => {
      this.waiting.set(seq, { resolve, reject });
      this.send({ ...m, seq_number: seq });
    });
  }

  async getWorkerInfo(): Promise<BuildbotWorkerInfo> {
    const r = await this.call({ op: 'get_worker_info' });
    return this.setDetails((typeof r === 'object' && r !== null ? r : {}) as BuildbotWorkerInfo);
  }

  /** Start a worker command; its end arrives with `complete` (or the connection's loss). */
  start(
    name: string,
    args: Record<string, unknown>,
    handlers: CommandHandlers,
  ): { id: string; done: Promise<RawEnd> } {
    const id = `${this.idPrefix}.${this.nextCommand++}`;
    let resolve!: (end: RawEnd) => void;
    const done = new Promise<RawEnd>((r) => {
      resolve = r;
    });
    if (!this.connected) {
      resolve({ lost: true, reason: this.lostReason });
      return { id, done };
    }
    const c: Command = { handlers, values: new Map(), chain: Promise.resolve(), failed: null, resolve };
    this.commands.set(id, c);
    // The worker may report (even complete) before it answers start_command.
    this.call({
      op: 'start_command',
      command_id: id,
      command_name: name,
      args,
    }).catch((err: Error) => {
      if (err instanceof ConnectionLostError || this.commands.get(id) !== c) return;
      this.commands.delete(id);
      c.chain.then(() => resolve({ values: c.values, failure: err.message }));
    });
    return { id, done };
  }

  interruptCommand(id: string, why: string): void {
    if (!this.commands.has(id)) return;
    this.call({ op: 'interrupt_command', command_id: id, why }).catch(() => {});
  }

  /** Any other worker command (./commands.ts), its text collected; rejects if the connection is lost. */
  async command(
    name: string,
    args: Record<string, unknown>,
    handlers: CommandHandlers = {},
  ): Promise<CommandResult> {
    const text = commandText();
    const { done } = this.start(name, args, {
      ...handlers,
      output: async (stream, t) => {
        if (stream !== 'o') text.add(t);
      },
    });
    const end = await done;
    if ('lost' in end) throw new ConnectionLostError(end.reason);
    const rc = end.values.get('rc');
    return {
      rc: typeof rc === 'number' ? rc : null,
      values: end.values,
      failure: end.failure,
      text: text.text(),
    };
  }

  /**
   * An operator's stop or kill: ask the worker to exit (it stops its reactor and does not come
   * back), then close the link, as on Flotilla's protocol. Resolves once the link is gone.
   */
  async shutdown(reason: string): Promise<void> {
    if (!this.connected) return;
    await Promise.race([this.call({ op: 'shutdown' }).catch(() => {}), delay(SHUTDOWN_ANSWER_MS)]);
    if (this.connected) this.socket.close(CloseCode.shutdown, closeReason(reason));
  }

  /** A frame from the worker (already parsed). */
  receive(f: WorkerFrame): void {
    if (f.op === 'response') {
      const w = this.waiting.get(f.seq_number);
      if (!w) return;
      this.waiting.delete(f.seq_number);
      if (f.is_exception) w.reject(new RemoteWorkerError(String(f.result)));
      else w.resolve(f.result);
      return;
    }
    if (f.op === 'unknown') {
      this.respond(f.seq_number, null, `Command ${f.name} does not exist.`);
      return;
    }
    const c = this.commands.get(f.command_id);
    if (!c) {
      this.respond(f.seq_number, null, 'unknown "command_id"');
      return;
    }
    if (f.op === 'update') this.update(c, f);
    else if (f.op === 'complete') {
      this.commands.delete(f.command_id);
      c.chain = c.chain.then(() => {
        this.respond(f.seq_number, null);
        c.resolve(
          c.failed
            ? { lost: true, reason: `output could not be stored: ${c.failed.message}` }
            : { values: c.values, failure: f.args },
        );
      });
    } else this.transfer(c, f);
  }

  private update(c: Command, f: Extract<WorkerOp, { op: 'update' }> & { seq_number: number }): void {
    let bytes = 0;
    for (const [, v] of f.args) {
      const li = lineInfo(v) ?? (Array.isArray(v) ? lineInfo(v[1]) : null);
      if (li) bytes += li[0].length;
    }
    this.hold(bytes);
    c.chain = c.chain.then(async () => {
      try {
        if (c.failed) throw c.failed;
        for (const [key, value] of f.args) {
          const stream = STREAMS[key];
          if (stream !== undefined) {
            const li = lineInfo(value);
            if (li && c.handlers.output) await c.handlers.output(stream, li[0]);
          } else if (key === 'log' && Array.isArray(value) && typeof value[0] === 'string') {
            const li = lineInfo(value[1]);
            if (li && c.handlers.output) await c.handlers.output('o', li[0], value[0]);
          } else if (READ_VALUES.has(key)) c.values.set(key, value);
        }
        this.respond(f.seq_number, null);
      } catch (err) {
        // Output that could not be stored is never acknowledged: stop the command.
        const first = c.failed === null;
        c.failed = err as Error;
        this.respond(f.seq_number, null, (err as Error).message);
        if (first)
          this.interruptCommand(f.command_id, `output could not be stored: ${(err as Error).message}`);
      } finally {
        this.hold(-bytes);
      }
    });
  }

  private transfer(
    c: Command,
    f: Exclude<WorkerOp, { op: 'update' | 'complete' }> & { seq_number: number },
  ): void {
    c.chain = c.chain.then(async () => {
      const h = c.handlers;
      try {
        let result: unknown = null;
        if (f.op === 'update_upload_file_write' || f.op === 'update_upload_directory_write') {
          if (!h.write) throw new Error('this command sends no file');
          await h.write(f.args);
        } else if (f.op === 'update_upload_file_utime') await h.utime?.(f.access_time, f.modified_time);
        else if (f.op === 'update_upload_directory_unpack') await h.unpack?.();
        else if (f.op === 'update_read_file') {
          if (!h.read) throw new Error('this command reads no file');
          // The worker names the length: bounded before anything is allocated for it.
          result = await h.read(Math.min(f.length, MAX_READ_BYTES));
        } else await h.close?.();
        this.respond(f.seq_number, result);
      } catch (err) {
        this.respond(f.seq_number, null, (err as Error).message);
      }
    });
  }

  /** The socket closed: every running command is lost, every request unanswered. */
  closed(reason: string): void {
    if (!this.connected) return;
    this.link.abort(reason);
    for (const w of this.waiting.values()) w.reject(new ConnectionLostError(reason));
    this.waiting.clear();
    for (const [id, c] of this.commands) {
      this.commands.delete(id);
      c.chain.then(() => c.resolve({ lost: true, reason }));
    }
  }
}
