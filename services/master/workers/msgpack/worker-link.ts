// What a buildbot-worker's connection is whatever protocol carries it (msgpack here in
// ./connection.ts; PB in ../pb/connection.ts): the worker's info, paths on it, the link's
// loss, the output held back while it is stored, and the WorkerConnection calls, which are
// the same buildbot-worker commands on both (./shell.ts, ./transfers.ts) started through
// each protocol's own start() and interruptCommand().
import { posix, win32 } from 'node:path';
import type { CommandRequest, WorkerInfo } from '../../../core/protocol/messages.js';
import type { CommandEnd, OutputSink, TransferEnd, TransferSpec, WorkerConnection } from '../connection.js';
import type { CommandHandlers, CommandStarter, RawEnd } from './command-start.js';
import type { BuildbotWorkerInfo } from './messages.js';
import { runShell } from './shell.js';
import * as transfers from './transfers.js';

/** Output received and not yet stored beyond which the link is no longer read. */
export const PAUSE_BYTES = 8 * 1024 * 1024;

/**
 * The values of a command's updates that the master reads (./shell.ts, ./commands.ts,
 * ./transfers.ts), on every protocol this link serves. Any other key is dropped: each update
 * is bounded, but a command takes any number of them, and a worker naming a new key in each
 * would grow the command's values without end.
 */
export const READ_VALUES: ReadonlySet<string> = new Set(['rc', 'elapsed', 'stat', 'files']);

export abstract class BuildbotWorkerLink implements WorkerConnection, CommandStarter {
  abstract readonly name: string;
  /** The four fields Buildbot keeps as workerinfo; set once the worker's info has answered. */
  info: WorkerInfo = { admin: '', host: '', access_uri: '', version: '' };
  /** Everything the worker's info answered (basedir, system, environ, worker_commands...). */
  details: BuildbotWorkerInfo = {};
  protected readonly link = new AbortController();
  private pending = 0;

  abstract start(
    name: string,
    args: Record<string, unknown>,
    handlers: CommandHandlers,
  ): { id: string; done: Promise<RawEnd> };
  abstract interruptCommand(id: string, why: string): void;
  /** Stop and start reading the link (TCP then holds the worker back). */
  protected abstract pauseReading(): void;
  protected abstract resumeReading(): void;

  /** Aborted once the link to the worker is gone, with the reason (a string) why. */
  get lost(): AbortSignal {
    return this.link.signal;
  }

  get connected(): boolean {
    return !this.link.signal.aborted;
  }

  protected get lostReason(): string {
    return String(this.link.signal.reason);
  }

  get pendingOutputBytes(): number {
    return this.pending;
  }

  /** Keep the worker's info answer; the workerinfo fields are its strings. */
  protected setDetails(d: BuildbotWorkerInfo): BuildbotWorkerInfo {
    const s = (v: unknown) => (typeof v === 'string' ? v : '');
    this.details = d;
    this.info = { admin: s(d.admin), host: s(d.host), access_uri: s(d.access_uri), version: s(d.version) };
    return d;
  }

  workerPath(...parts: string[]): string | null {
    return this.details.basedir ? this.path(...parts) : null;
  }

  /** An absolute path on the worker, from parts relative to its base directory. */
  path(...parts: string[]): string {
    const p = this.details.system === 'nt' ? win32 : posix;
    return p.join(this.details.basedir ?? '', ...parts);
  }

  /**
   * A shell command: the same request and outcome as on a Flotilla agent (./shell.ts). An abort
   * of `signal` interrupts it on the worker; the result settles after all its output went
   * through the sink.
   */
  run(request: CommandRequest, sink: OutputSink, signal?: AbortSignal): Promise<CommandEnd> {
    return runShell(this, request, sink, signal);
  }

  /** A file from the worker (./transfers.ts). */
  upload(
    spec: TransferSpec,
    write: (b: Uint8Array) => Promise<void>,
    signal?: AbortSignal,
  ): Promise<TransferEnd> {
    return transfers.upload(this, spec, write, signal);
  }

  /** A directory from the worker as a tar archive (./transfers.ts). */
  uploadDirectory(
    spec: TransferSpec,
    write: (b: Uint8Array) => Promise<void>,
    signal?: AbortSignal,
  ): Promise<TransferEnd> {
    return transfers.uploadDirectory(this, spec, write, signal);
  }

  /** A file to the worker (./transfers.ts). */
  download(
    spec: TransferSpec,
    read: (n: number) => Promise<Uint8Array>,
    signal?: AbortSignal,
  ): Promise<TransferEnd> {
    return transfers.download(this, spec, read, signal);
  }

  abstract shutdown(reason: string): void;

  /** Count output waiting for the sink (negative once stored); pauses the link past PAUSE_BYTES. */
  protected hold(bytes: number): void {
    const before = this.pending;
    this.pending += bytes;
    if (before <= PAUSE_BYTES && this.pending > PAUSE_BYTES) this.pauseReading();
    else if (before > PAUSE_BYTES && this.pending <= PAUSE_BYTES) this.resumeReading();
  }
}
