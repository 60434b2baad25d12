// One connected worker, as the master's build runner sees it: start a command, receive its
// output in order (each batch acknowledged only after the sink has stored it, which is what
// makes an acknowledged line durable), interrupt it, learn how it ended, or that the worker
// was lost.
import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import type {
  CommandOutcome,
  CommandRequest,
  MasterToWorker,
  OutputStream,
  WorkerInfo,
  WorkerToMaster,
} from '../../core/protocol/messages.js';

/** Stores output; the worker hears its acknowledgement when this resolves. */
export type OutputSink = (stream: OutputStream, text: string, log?: string) => Promise<void>;

export type CommandEnd = CommandOutcome | { lost: true; reason: string };

export interface RemoteCommand {
  id: string;
  /** Settles after all the command's output went through the sink. */
  done: Promise<CommandEnd>;
  interrupt(reason: string): void;
}

interface Pending {
  sink: OutputSink;
  /** Output is stored strictly in order: each batch waits for the one before. */
  chain: Promise<void>;
  resolve: (end: CommandEnd) => void;
  failed: Error | null;
}

export class WorkerConnection {
  private readonly commands = new Map<string, Pending>();
  private closedReason: string | null = null;
  private pending = 0;

  constructor(
    readonly name: string,
    readonly info: WorkerInfo,
    private readonly socket: WebSocket,
  ) {}

  get connected(): boolean {
    return this.closedReason === null;
  }

  get running(): number {
    return this.commands.size;
  }

  /** Output received and not yet stored, in bytes; the worker's window bounds it. */
  get pendingOutputBytes(): number {
    return this.pending;
  }

  private send(m: MasterToWorker): void {
    if (this.closedReason === null) this.socket.send(JSON.stringify(m));
  }

  run(request: CommandRequest, sink: OutputSink): RemoteCommand {
    const id = randomUUID();
    let resolve!: (end: CommandEnd) => void;
    const done = new Promise<CommandEnd>((r) => {
      resolve = r;
    });
    if (this.closedReason !== null) {
      resolve({ lost: true, reason: this.closedReason });
      return { id, done, interrupt: () => {} };
    }
    this.commands.set(id, { sink, chain: Promise.resolve(), resolve, failed: null });
    this.send({ type: 'start', cmd: id, request });
    return { id, done, interrupt: (reason) => this.send({ type: 'interrupt', cmd: id, reason }) };
  }

  /** A frame from the worker (already parsed). */
  receive(m: WorkerToMaster): void {
    if (m.type === 'hello') return;
    const p = this.commands.get(m.cmd);
    if (!p) return;
    if (m.type === 'output') {
      const bytes = Buffer.byteLength(m.text);
      this.pending += bytes;
      p.chain = p.chain.then(async () => {
        this.pending -= bytes;
        if (p.failed) return;
        try {
          await p.sink(m.stream, m.text, m.log);
          this.send({ type: 'ack', cmd: m.cmd, seq: m.seq });
        } catch (err) {
          // Output we could not store must not be acknowledged: stop the command.
          p.failed = err as Error;
          this.send({
            type: 'interrupt',
            cmd: m.cmd,
            reason: `output could not be stored: ${(err as Error).message}`,
          });
        }
      });
    } else {
      p.chain.then(() => {
        this.commands.delete(m.cmd);
        p.resolve(
          p.failed ? { lost: true, reason: `output could not be stored: ${p.failed.message}` } : m.outcome,
        );
      });
    }
  }

  /** Close the link to the worker (an operator's stop or kill). */
  disconnect(code: number, reason: string): void {
    this.socket.close(code, reason.slice(0, 120));
  }

  /** The socket closed: every running command is lost. */
  closed(reason: string): void {
    if (this.closedReason !== null) return;
    this.closedReason = reason;
    for (const [id, p] of this.commands) {
      this.commands.delete(id);
      p.chain.then(() => p.resolve({ lost: true, reason }));
    }
  }
}
