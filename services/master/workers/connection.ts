// A connected worker, as the master's build runner sees it, whatever protocol it speaks
// (flotilla/: our JSON over a WebSocket; msgpack/: Buildbot's msgpack_experimental_v7):
// start a command, receive its output in order (each piece acknowledged to the worker only
// after the sink has stored it, which is what makes an acknowledged line durable), interrupt
// it through a signal, learn how it ended, or that the worker was lost; and move files both
// ways (upload, uploadDirectory, download), with Buildbot's worker commands' semantics
// whatever the protocol.
import type { MasterConfig, SchedulerConfig } from '../../core/config/master-config.js';
import type { BuildOutcome, NewChange } from '../../core/data/index.js';
import type {
  CommandOutcome,
  CommandRequest,
  OutputStream,
  TransferRequest,
  WorkerInfo,
} from '../../core/protocol/messages.js';
import type { TryJob } from '../schedulers/try-job.js';

/** Stores output; the worker hears its acknowledgement when this resolves. */
export type OutputSink = (stream: OutputStream, text: string, log?: string) => Promise<void>;

export type CommandEnd = CommandOutcome | { lost: true; reason: string };

/** A transfer's parameters (core/protocol/messages.ts TransferRequest, without its op). */
export type TransferSpec = Omit<TransferRequest, 'op'>;

/**
 * The most bytes a download's `read` is asked for at once, whatever the worker asks: on
 * msgpack, buildbot-worker names each read's length itself (update_read_file), and issue
 * 28's review saw a length of 8e9 grow the master's virtual memory by 8 GB. A larger ask
 * gets a short block, which the worker takes as it takes any block short of its ask, and
 * asks again. 1 MiB is four times the largest block Buildbot's steps ask by default (256 KiB).
 */
export const MAX_READ_BYTES = 1024 * 1024;

/**
 * How a transfer ended: its rc, what the worker said on stderr (a missing file, maxsize), and
 * the header lines it sent (buildbot-worker's `sending PATH`), which the step writes before
 * Buildbot's `program finished` line as Buildbot's log has them (steps/transfer.ts).
 */
export type TransferEnd = { rc: number; text: string; header?: string } | { lost: true; reason: string };

export interface WorkerConnection {
  readonly name: string;
  readonly info: WorkerInfo;
  /**
   * An absolute path on the worker, from parts relative to its base directory (joined as the
   * worker's system joins paths); null when the worker did not say where that directory is.
   */
  workerPath(...parts: string[]): string | null;
  /** Aborted once the link to the worker is gone, with the reason (a string) why. */
  readonly lost: AbortSignal;
  /**
   * Run a command. Settles after all its output went through the sink; an abort of `signal`
   * interrupts it on the worker (the reason, or its message, is what the worker shows).
   */
  run(request: CommandRequest, sink: OutputSink, signal?: AbortSignal): Promise<CommandEnd>;
  /**
   * A file from the worker (buildbot-worker's upload_file), block by block into `write`; the
   * next block comes only once `write` has resolved.
   */
  upload(
    spec: TransferSpec,
    write: (block: Uint8Array) => Promise<void>,
    signal?: AbortSignal,
  ): Promise<TransferEnd>;
  /** A directory from the worker as a tar archive (upload_directory; compress null, gz or bz2). */
  uploadDirectory(
    spec: TransferSpec,
    write: (block: Uint8Array) => Promise<void>,
    signal?: AbortSignal,
  ): Promise<TransferEnd>;
  /**
   * A file to the worker (download_file): `read(n)` gives up to n bytes (n at most
   * MAX_READ_BYTES), an empty block at the end.
   */
  download(
    spec: TransferSpec,
    read: (n: number) => Promise<Uint8Array>,
    signal?: AbortSignal,
  ): Promise<TransferEnd>;
  /** An operator's stop or kill: close the link, and the worker exits instead of coming back. */
  shutdown(reason: string): void;
}

/** The workers connected to a master right now, by name. */
export interface ConnectedWorkers {
  connected(): WorkerConnection[];
  get(name: string): WorkerConnection | undefined;
  close(): Promise<void>;
  /**
   * A reloaded configuration (master/reconfigure.ts): logins from now on are checked against
   * its workers and accounts; who is connected stays. Absent: the listener knows no accounts
   * (a test's scripted workers).
   */
  reconfigure?(config: MasterConfig): void;
}

/** What a master hears of workers coming and going. */
export interface WorkerEvents {
  connected?: (w: WorkerConnection) => void;
  disconnected?: (w: WorkerConnection) => void;
  /**
   * Adds a change `buildbot sendchange` sent to the PB port (./pb/change-source.ts), as the
   * change hooks add theirs; its id. Without it the PB port takes no changes.
   */
  addChange?: (c: NewChange) => Promise<number>;
  /** What `buildbot try --connect=pb` asks of the master (./pb/try-userpass.ts); without it the PB port takes no tries. */
  tries?: TryRequests;
}

/** A try build set: its id, and each builder's build request. */
export interface TryBuildset {
  bsid: number;
  requests: { builder: string; brid: number }[];
}

/** The master's side of a Try_Userpass scheduler: add a try's build set, and read its builds. */
export interface TryRequests {
  /** The build set of a try on `builders` (TryBase's filter passed); null if the scheduler is disabled. */
  add(
    s: SchedulerConfig,
    job: Omit<TryJob, 'jobid'>,
    builders: readonly string[],
    reason: string,
  ): Promise<TryBuildset | null>;
  /** The builds of a build request, oldest first. */
  builds(brid: number): Promise<BuildOutcome[]>;
  /** One build's outcome (undefined: gone). */
  build(buildid: number): Promise<BuildOutcome | undefined>;
}

/** The text an abort reason shows (an Error's message, else the value itself). */
export function reasonText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
