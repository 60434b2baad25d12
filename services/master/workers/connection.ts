// A connected worker, as the master's build runner sees it, whatever protocol it speaks
// (flotilla/: our JSON over a WebSocket; later Buildbot's own): start a command, receive its
// output in order (each piece acknowledged to the worker only after the sink has stored it,
// which is what makes an acknowledged line durable), interrupt it through a signal, learn how
// it ended, or that the worker was lost.
import type {
  CommandOutcome,
  CommandRequest,
  OutputStream,
  WorkerInfo,
} from '../../core/protocol/messages.js';

/** Stores output; the worker hears its acknowledgement when this resolves. */
export type OutputSink = (stream: OutputStream, text: string, log?: string) => Promise<void>;

export type CommandEnd = CommandOutcome | { lost: true; reason: string };

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
  /** An operator's stop or kill: close the link, and the worker exits instead of coming back. */
  shutdown(reason: string): void;
}

/** The workers connected to a master right now, by name. */
export interface ConnectedWorkers {
  connected(): WorkerConnection[];
  get(name: string): WorkerConnection | undefined;
  close(): Promise<void>;
}

/** What a master hears of workers coming and going. */
export interface WorkerEvents {
  connected?: (w: WorkerConnection) => void;
  disconnected?: (w: WorkerConnection) => void;
}

/** The text an abort reason shows (an Error's message, else the value itself). */
export function reasonText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
