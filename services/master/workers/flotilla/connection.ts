// One worker connected over Flotilla's own protocol (core/protocol/messages.ts: JSON text
// frames over a WebSocket): commands are started by id, their output arrives in numbered
// batches, each acknowledged once the sink has stored it, and the command's end comes last.
import { randomUUID } from 'node:crypto';
import { posix } from 'node:path';
import { context, propagation } from '@opentelemetry/api';
import type { WebSocket } from 'ws';
import {
  CloseCode,
  type CommandRequest,
  type MasterToWorker,
  type TransferRequest,
  type WorkerInfo,
  type WorkerToMaster,
} from '../../../core/protocol/messages.js';
import { commandText } from '../command-text.js';
import {
  type CommandEnd,
  MAX_READ_BYTES,
  type OutputSink,
  reasonText,
  type TransferEnd,
  type TransferSpec,
  type WorkerConnection,
} from '../connection.js';

// A download's blocks, when the request names no size (buildbot-worker's default).
const DEFAULT_BLOCK = 256 * 1024;

// A WebSocket close reason is at most 123 bytes.
const MAX_CLOSE_REASON = 120;

interface Pending {
  sink: OutputSink;
  /** An upload's blocks go here (stored before they are acknowledged, as output is). */
  write?: (block: Uint8Array) => Promise<void>;
  /** A download's blocks the worker has written, by seq. */
  written?: Map<number, () => void>;
  /** Output is stored strictly in order: each batch waits for the one before. */
  chain: Promise<void>;
  resolve: (end: CommandEnd) => void;
  failed: Error | null;
}

export class FlotillaConnection implements WorkerConnection {
  private readonly commands = new Map<string, Pending>();
  private readonly link = new AbortController();
  private pending = 0;

  constructor(
    readonly name: string,
    readonly info: WorkerInfo,
    private readonly socket: WebSocket,
    /** What the agent said its base directory is (absolute), if it did. */
    private readonly basedir: string | null = null,
  ) {}

  workerPath(...parts: string[]): string | null {
    // Flotilla's agent runs on POSIX systems only.
    return this.basedir === null ? null : posix.join(this.basedir, ...parts);
  }

  get lost(): AbortSignal {
    return this.link.signal;
  }

  /** Output received and not yet stored, in bytes; the worker's window bounds it. */
  get pendingOutputBytes(): number {
    return this.pending;
  }

  private send(m: MasterToWorker): void {
    if (!this.lost.aborted) this.socket.send(JSON.stringify(m));
  }

  run(request: CommandRequest, sink: OutputSink, signal?: AbortSignal): Promise<CommandEnd> {
    if (this.lost.aborted) return Promise.resolve({ lost: true, reason: reasonText(this.lost.reason) });
    const id = randomUUID();
    return new Promise<CommandEnd>((resolve) => {
      const interrupt = () => {
        const kill = (signal?.reason as { immediate?: unknown } | undefined)?.immediate === true;
        this.send({
          type: 'interrupt',
          cmd: id,
          reason: reasonText(signal?.reason),
          ...(kill ? { kill } : {}),
        });
      };
      this.commands.set(id, {
        sink,
        chain: Promise.resolve(),
        resolve: (end) => {
          signal?.removeEventListener('abort', interrupt);
          resolve(end);
        },
        failed: null,
      });
      // The step's trace goes with the command, so the worker's span joins it.
      const trace: Record<string, string> = {};
      propagation.inject(context.active(), trace);
      this.send({ type: 'start', cmd: id, request, ...(Object.keys(trace).length ? { trace } : {}) });
      if (signal?.aborted) interrupt();
      else signal?.addEventListener('abort', interrupt, { once: true });
    });
  }

  /** A frame from the worker (already parsed). */
  receive(m: WorkerToMaster): void {
    if (m.type === 'hello') return;
    const p = this.commands.get(m.cmd);
    if (!p) return;
    if (m.type === 'ack') {
      p.written?.get(m.seq)?.();
      return;
    }
    if (m.type === 'data') {
      const block = Buffer.from(m.data, 'base64');
      this.pending += block.length;
      p.chain = p.chain.then(async () => {
        this.pending -= block.length;
        if (p.failed) return;
        try {
          if (!p.write) throw new Error('this command sends no file');
          await p.write(block);
          this.send({ type: 'ack', cmd: m.cmd, seq: m.seq });
        } catch (err) {
          p.failed = err as Error;
          this.send({
            type: 'interrupt',
            cmd: m.cmd,
            reason: `upload could not be stored: ${(err as Error).message}`,
          });
        }
      });
      return;
    }
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
          // Output we could not store must not be acknowledged: stop the command, at once (its
          // output has nowhere to go, and its request may already run elsewhere).
          p.failed = err as Error;
          this.send({
            type: 'interrupt',
            cmd: m.cmd,
            reason: `output could not be stored: ${(err as Error).message}`,
            kill: true,
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

  upload(
    spec: TransferSpec,
    write: (b: Uint8Array) => Promise<void>,
    signal?: AbortSignal,
  ): Promise<TransferEnd> {
    return this.transfer({ ...spec, op: 'upload' }, { write }, signal);
  }

  uploadDirectory(
    spec: TransferSpec,
    write: (b: Uint8Array) => Promise<void>,
    signal?: AbortSignal,
  ): Promise<TransferEnd> {
    return this.transfer({ ...spec, op: 'upload-directory' }, { write }, signal);
  }

  download(
    spec: TransferSpec,
    read: (n: number) => Promise<Uint8Array>,
    signal?: AbortSignal,
  ): Promise<TransferEnd> {
    return this.transfer({ ...spec, op: 'download' }, { read }, signal);
  }

  private transfer(
    request: TransferRequest,
    h: { write?: (b: Uint8Array) => Promise<void>; read?: (n: number) => Promise<Uint8Array> },
    signal?: AbortSignal,
  ): Promise<TransferEnd> {
    if (this.lost.aborted) return Promise.resolve({ lost: true, reason: reasonText(this.lost.reason) });
    const id = randomUUID();
    const text = commandText();
    const written = new Map<number, () => void>();
    const ended = new AbortController();
    const done = new Promise<TransferEnd>((resolve) => {
      const interrupt = () => this.send({ type: 'interrupt', cmd: id, reason: reasonText(signal?.reason) });
      this.commands.set(id, {
        sink: async (stream, t) => {
          if (stream !== 'o') text.add(t);
        },
        ...(h.write ? { write: h.write } : {}),
        written,
        chain: Promise.resolve(),
        resolve: (end) => {
          signal?.removeEventListener('abort', interrupt);
          ended.abort();
          for (const w of written.values()) w();
          resolve('lost' in end ? end : { rc: end.rc ?? -1, text: text.text() });
        },
        failed: null,
      });
      this.send({ type: 'transfer', cmd: id, request });
      if (signal?.aborted) interrupt();
      else signal?.addEventListener('abort', interrupt, { once: true });
    });
    if (h.read) {
      const blocksize = Math.min(request.blocksize ?? DEFAULT_BLOCK, MAX_READ_BYTES);
      void this.pump(id, h.read, blocksize, written, ended.signal);
    }
    return done;
  }

  /** A download's blocks, one at a time: the next goes once the worker has written the last. */
  private async pump(
    id: string,
    read: (n: number) => Promise<Uint8Array>,
    blocksize: number,
    written: Map<number, () => void>,
    ended: AbortSignal,
  ): Promise<void> {
    for (let seq = 1; !ended.aborted; seq++) {
      let block: Uint8Array;
      try {
        block = await read(blocksize);
      } catch (err) {
        this.send({
          type: 'interrupt',
          cmd: id,
          reason: `download could not be read: ${(err as Error).message}`,
        });
        return;
      }
      if (ended.aborted) return;
      const ack = new Promise<void>((resolve) => written.set(seq, resolve));
      this.send({
        type: 'data',
        cmd: id,
        seq,
        data: Buffer.from(block).toString('base64'),
        eof: block.length === 0,
      });
      if (block.length === 0) return;
      await ack;
      written.delete(seq);
    }
  }

  shutdown(reason: string): void {
    this.socket.close(CloseCode.shutdown, reason.slice(0, MAX_CLOSE_REASON));
  }

  /** The socket closed: every running command is lost. */
  closed(reason: string): void {
    if (this.lost.aborted) return;
    this.link.abort(reason);
    for (const [id, p] of this.commands) {
      this.commands.delete(id);
      p.chain.then(() => p.resolve({ lost: true, reason }));
    }
  }
}
