// One buildbot-worker connected over PB, as the master's build runner sees it: a
// WorkerConnection (../connection.ts) and a CommandStarter, on the same base as msgpack's
// (../msgpack/worker-link.ts), so the shell command and the transfers are asked and answered
// by the same code (../msgpack/shell.ts, ../msgpack/transfers.ts: buildbot-worker's commands
// are the same whatever the protocol).
// This file holds what PB does differently (buildbot/worker/protocols/pb.py;
// buildbot_worker/pb.py):
// - commands go to a builder: setBuilderList answers a reference per builder, and a builder
//   runs one command at a time (a second one makes the worker drop the first). A command is
//   started on a builder with none running; its paths are absolute, so which builder carries
//   it does not change where it runs (the worker joins an absolute path as itself).
// - the worker reports by calling the master's objects: `update` and `complete` on the
//   command object passed to startCommand, `write`/`utime`/`unpack`/`close` on the writer
//   and `read`/`close` on the reader passed in the command's args. Each object refuses calls
//   once its command ended; the worker drops its references (decref) when its command ends.
// - keepalive is `print(message='keepalive')` on the worker's mind; the worker's own
//   keepalive and shutdown come to the perspective.
//
// Durability as on msgpack: an update is answered only after its output went through the
// sink, in order; buildbot-worker does not wait for those answers, so while more than
// PAUSE_BYTES of output await storing, the transport stops reading.
import { randomBytes } from 'node:crypto';
import { MAX_READ_BYTES } from '../connection.js';
import type { CommandHandlers, RawEnd } from '../msgpack/command-start.js';
import type { BuildbotWorkerInfo } from '../msgpack/messages.js';
import { BuildbotWorkerLink } from '../msgpack/worker-link.js';
import { LocalObject, type RemoteReference } from './broker.js';
import { type JellyValue, Tuple } from './jelly.js';
import { failureText, outputBytes, readUpdates } from './updates.js';
import { textOf, toJelly } from './values.js';
import { pbWorkerInfo } from './worker-info.js';

/** How a shutdown waits for the worker's answer before it closes the link anyway. */
const SHUTDOWN_ANSWER_MS = 5_000;
const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/** What the connection needs of the TCP link under the broker. */
export interface PbTransport {
  pause(): void;
  resume(): void;
  /** Close the link (the broker's connectionLost then follows, through closed()). */
  close(reason: string): void;
}

interface Command {
  builder: string;
  handlers: CommandHandlers;
  values: Map<string, unknown>;
  /** Everything about one command is handled strictly in order. */
  chain: Promise<void>;
  failed: Error | null;
  ended: boolean;
  resolve: (end: RawEnd) => void;
}

export class PbWorkerConnection extends BuildbotWorkerLink {
  readonly protocol = 'pb';
  /** When the worker last said anything (Buildbot's messageReceivedFromWorker), ms since the epoch. */
  lastHeard = Date.now();
  private readonly builders = new Map<string, RemoteReference>();
  /** Builder name -> the command it runs. */
  private readonly busy = new Map<string, string>();
  private readonly commands = new Map<string, Command>();
  // As on msgpack: ids must not repeat on a worker's next connection.
  private readonly idPrefix = randomBytes(4).toString('hex');
  private nextCommand = 0;
  private shutdownAsked: (() => void) | undefined;

  constructor(
    readonly name: string,
    /** The worker's mind: what it passed to the login's respond. */
    private readonly mind: RemoteReference,
    private readonly transport: PbTransport,
  ) {
    super();
  }

  /** Commands started and not yet complete. */
  get running(): number {
    return this.commands.size;
  }

  protected pauseReading(): void {
    this.transport.pause();
  }

  protected resumeReading(): void {
    this.transport.resume();
  }

  /** The perspective the login answers the worker with: its keepalive and its shutdown request. */
  perspective(onShutdownRequested?: () => void): LocalObject {
    this.shutdownAsked = onShutdownRequested;
    return new LocalObject('Connection', {
      keepalive: () => {
        this.heard();
        return null;
      },
      shutdown: () => {
        this.heard();
        this.shutdownAsked?.();
        return null;
      },
    });
  }

  private heard(): void {
    this.lastHeard = Date.now();
  }

  /** print on the worker (Buildbot's keepalive is print('keepalive')); resolves when answered. */
  async print(message: string): Promise<void> {
    await this.mind.callRemoteKw('print', [], { message });
  }

  keepalive(): Promise<void> {
    return this.print('keepalive');
  }

  async getWorkerInfo(): Promise<BuildbotWorkerInfo> {
    return this.setDetails(await pbWorkerInfo(this.mind));
  }

  /**
   * The worker's builders, each with its directory under the worker's base directory: the
   * worker makes the missing ones, forgets builders not named, and deletes other directories
   * when it was created with --delete-leftover-dirs. Answers the names the worker now has.
   */
  async setBuilderList(builders: [name: string, builddir: string][]): Promise<string[]> {
    const answer = await this.mind.callRemote(
      'setBuilderList',
      builders.map(([n, d]) => new Tuple(n, d)),
    );
    if (!(answer instanceof Map)) throw new Error('setBuilderList: the worker answered no dict');
    for (const [old, ref] of this.builders)
      if (!answer.has(old) || answer.get(old) !== ref) {
        ref.release();
        this.builders.delete(old);
      }
    for (const [k, ref] of answer) {
      const n = textOf(k as JellyValue);
      if (n === undefined || !ref || typeof ref !== 'object' || !('callRemote' in ref))
        throw new Error('setBuilderList: the worker answered something other than builder references');
      this.builders.set(n, ref as RemoteReference);
    }
    return [...this.builders.keys()];
  }

  /** startBuild on a builder: Buildbot calls it before a build's first step; the worker does nothing. */
  async startBuild(builder: string): Promise<void> {
    const ref = this.builders.get(builder);
    if (!ref) throw new Error(`the worker has no builder ${builder}`);
    await ref.callRemote('startBuild');
  }

  /** A builder with no command running, or undefined. */
  private freeBuilder(): string | undefined {
    for (const n of this.builders.keys()) if (!this.busy.has(n)) return n;
    return undefined;
  }

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
    const builder = this.freeBuilder();
    if (builder === undefined) {
      resolve({ values: new Map(), failure: 'the worker has no builder free to run a command' });
      return { id, done };
    }
    const c: Command = {
      builder,
      handlers,
      values: new Map(),
      chain: Promise.resolve(),
      failed: null,
      ended: false,
      resolve,
    };
    this.commands.set(id, c);
    this.busy.set(builder, id);
    const extra: Record<string, LocalObject> = {};
    if (handlers.write) extra.writer = this.writer(c);
    if (handlers.read) extra.reader = this.reader(c);
    const ref = this.builders.get(builder) as RemoteReference;
    ref
      .callRemote('startCommand', this.commandObject(id, c), id, name, toJelly({ ...args, ...extra }))
      .catch((err: unknown) => {
        if (!this.connected || c.ended) return;
        this.end(id, c, () => ({ values: c.values, failure: failureText(err as JellyValue) ?? String(err) }));
      });
    return { id, done };
  }

  interruptCommand(id: string, why: string): void {
    const c = this.commands.get(id);
    if (!c) return;
    this.builders
      .get(c.builder)
      ?.callRemote('interruptCommand', id, why)
      .catch(() => {});
  }

  /**
   * An operator's stop or kill: ask the worker to exit (its shutdown stops its reactor; it
   * does not come back), then close the link. Resolves once the link is gone.
   */
  async shutdown(reason: string): Promise<void> {
    if (!this.connected) return;
    await Promise.race([this.mind.callRemote('shutdown').catch(() => {}), delay(SHUTDOWN_ANSWER_MS)]);
    if (this.connected) this.transport.close(reason);
  }

  /** The link is gone: every running command is lost. */
  closed(reason: string): void {
    if (!this.connected) return;
    this.link.abort(reason);
    for (const [id, c] of this.commands) this.end(id, c, () => ({ lost: true, reason }));
  }

  /** The command's end, after everything queued for it; its builder is free again. */
  private end(id: string, c: Command, end: () => RawEnd): void {
    if (c.ended) return;
    c.ended = true;
    this.commands.delete(id);
    if (this.busy.get(c.builder) === id) this.busy.delete(c.builder);
    c.chain = c.chain.then(() => c.resolve(end()));
  }

  /** Refuses a call on one of a command's objects once the command ended. */
  private live(c: Command): void {
    if (c.ended) throw new Error('this command has ended');
    this.heard();
  }

  /** The RemoteCommand the worker reports to: update and complete. */
  private commandObject(id: string, c: Command): LocalObject {
    return new LocalObject('RemoteCommand', {
      update: ([updates]) => {
        this.live(c);
        const pieces = readUpdates(updates);
        const bytes = outputBytes(pieces);
        this.hold(bytes);
        const stored = c.chain.then(async () => {
          try {
            if (c.failed) throw c.failed;
            for (const p of pieces) {
              if ('output' in p) await c.handlers.output?.(p.output, p.text, p.log);
              else c.values.set(p.key, p.value);
            }
          } catch (err) {
            // Output that could not be stored is never acknowledged: stop the command.
            const first = c.failed === null;
            c.failed = err as Error;
            if (first) this.interruptCommand(id, `output could not be stored: ${(err as Error).message}`);
            throw err;
          } finally {
            this.hold(-bytes);
          }
        });
        c.chain = stored.catch(() => {});
        // Buildbot answers the highest update number it saw, which is always 0 from 3.7.
        return stored.then(() => 0);
      },
      complete: ([failure]) => {
        this.live(c);
        // Read once every update before it went through the sink.
        this.end(id, c, () =>
          c.failed
            ? { lost: true, reason: `output could not be stored: ${c.failed.message}` }
            : { values: c.values, failure: failureText(failure) },
        );
        return null;
      },
    });
  }

  /** The writer of an upload: write, utime, unpack, close (buildbot's FileWriterImpl). */
  private writer(c: Command): LocalObject {
    const step = (f: () => Promise<void> | undefined) => {
      this.live(c);
      const r = c.chain.then(async () => {
        await f();
        return null;
      });
      c.chain = r.then(
        () => {},
        () => {},
      );
      return r;
    };
    return new LocalObject('FileWriterProxy', {
      write: ([data]) => {
        const b =
          data instanceof Uint8Array ? data : typeof data === 'string' ? Buffer.from(data, 'utf8') : null;
        if (!b) throw new Error('write: not bytes');
        return step(() => c.handlers.write?.(b));
      },
      utime: ([times]) => {
        const t = times instanceof Tuple ? times.items : Array.isArray(times) ? times : [];
        const [a, m] = t;
        if (typeof a !== 'number' || typeof m !== 'number') throw new Error('utime: not (atime, mtime)');
        return step(() => c.handlers.utime?.(a, m));
      },
      unpack: () => step(() => c.handlers.unpack?.()),
      close: () => step(() => c.handlers.close?.()),
    });
  }

  /** The reader of a download: read(maxLength), close (buildbot's FileReaderImpl). */
  private reader(c: Command): LocalObject {
    return new LocalObject('FileReaderProxy', {
      read: ([length]) => {
        this.live(c);
        if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0)
          throw new Error('read: not a length');
        const read = c.handlers.read as (n: number) => Promise<Uint8Array>;
        // The worker names the length: bounded before anything is allocated for it.
        const r = c.chain.then(() => read(Math.min(length, MAX_READ_BYTES)));
        c.chain = r.then(
          () => {},
          () => {},
        );
        return r.then((b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength));
      },
      close: () => {
        this.live(c);
        const r = c.chain.then(async () => {
          await c.handlers.close?.();
          return null;
        });
        c.chain = r.then(
          () => {},
          () => {},
        );
        return r;
      },
    });
  }
}
