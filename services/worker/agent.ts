// The worker's side of running commands for a master: start them in the worker's directory,
// send their output in numbered batches (one stream, or one logfile, per batch, so order is
// kept), hold the command's pipes and its logfiles while more than WINDOW bytes await
// acknowledgement, and report the end.
import { resolve, sep } from 'node:path';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type {
  CommandRequest,
  MasterToWorker,
  OutputStream,
  WorkerToMaster,
} from '../core/protocol/messages.js';
import type { Logger } from '../core/telemetry/logger.js';
import { type RunningCommand, runCommand } from './command.js';
import type { StepUser } from './credentials.js';
import { LogfileWatchers } from './logfiles.js';
import type { Reaper } from './reaper.js';
import { Transfers } from './transfer.js';

const tracer = trace.getTracer('flotilla-worker');
const BATCH_BYTES = 32 * 1024;
const BATCH_DELAY_MS = 10;
export const WINDOW_BYTES = 1024 * 1024;

interface Active {
  /** Unset while its logfiles' states are being taken. */
  running: RunningCommand | undefined;
  watchers: LogfileWatchers | undefined;
  /** An interrupt that came before the command started. */
  interruptedEarly: { reason: string; kill: boolean } | undefined;
  seq: number;
  inFlight: Map<number, number>;
  inFlightBytes: number;
  paused: boolean;
  stream: OutputStream | null;
  /** The logfile the batch's text belongs to, if it is not the command's own output. */
  log: string | undefined;
  text: string;
  timer: NodeJS.Timeout | undefined;
}

export class Agent {
  private readonly active = new Map<string, Active>();

  constructor(
    private readonly baseDir: string,
    private readonly send: (m: WorkerToMaster) => void,
    private readonly log: Logger,
    /** Kills the commands' process groups if this process dies (reaper.ts). */
    private readonly reaper?: Reaper,
    /** Who steps run as (WORKER_STEP_USER); absent: the agent's own user. */
    private readonly stepUser?: StepUser,
  ) {
    this.transfers = new Transfers(send, (rel) => this.workdir(rel), stepUser);
  }

  /** File transfers (transfer.ts), by their own command ids. */
  private readonly transfers: Transfers;

  get running(): number {
    return this.active.size;
  }

  handle(m: MasterToWorker): void {
    if (m.type === 'start') {
      // The command's span continues the master's trace of the step (when it sent one).
      const parent = propagation.extract(ROOT_CONTEXT, m.trace ?? {});
      context.with(parent, () => this.start(m.cmd, m.request));
    } else if (m.type === 'transfer') this.transfers.start(m.cmd, m.request);
    else if (m.type === 'data') this.transfers.data(m);
    else if (m.type === 'interrupt') {
      if (this.transfers.has(m.cmd)) this.transfers.interrupt(m.cmd, m.reason);
      else this.interrupt(m.cmd, m.reason, m.kill === true);
    } else if (m.type === 'ack') {
      if (this.transfers.has(m.cmd)) this.transfers.ack(m.cmd, m.seq);
      else this.ack(m.cmd, m.seq);
    }
  }

  /** With `kill`, the whole process group dies now, without the grace an interrupt gives. */
  private interrupt(cmd: string, reason: string, kill: boolean): void {
    const a = this.active.get(cmd);
    if (!a) return;
    if (!a.running) {
      a.interruptedEarly ??= { reason, kill };
      if (kill) a.interruptedEarly.kill = true;
    } else if (kill) a.running.kill(reason);
    else a.running.interrupt(reason);
  }

  /**
   * The master is gone (its link closed, or it went silent): nobody will read the output,
   * and the cluster will run its requests elsewhere, so every command dies now.
   */
  lost(): void {
    this.transfers.lost();
    for (const cmd of this.active.keys()) this.interrupt(cmd, 'lost the master', true);
  }

  /**
   * The worker is stopping: every command is interrupted, with its usual grace; resolves once
   * all have ended and the master has been told (so it need not wait for them), or after
   * `waitMs`.
   */
  async stopAll(reason: string, waitMs: number): Promise<void> {
    this.transfers.lost(reason);
    for (const cmd of this.active.keys()) this.interrupt(cmd, reason, false);
    const until = Date.now() + waitMs;
    while (this.active.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  }

  private workdir(rel: string): string | null {
    const base = resolve(this.baseDir);
    const dir = resolve(base, rel);
    return dir === base || dir.startsWith(base + sep) ? dir : null;
  }

  private start(cmd: string, request: CommandRequest): void {
    if (this.active.has(cmd)) return;
    const dir = this.workdir(request.workdir);
    if (!dir) {
      this.send({
        type: 'output',
        cmd,
        seq: 1,
        stream: 'h',
        text: `refused: workdir ${request.workdir} is outside the worker's directory\n`,
      });
      this.send({
        type: 'done',
        cmd,
        outcome: { rc: -1, signal: null, interrupted: false, timedOut: false, elapsedSeconds: 0 },
      });
      return;
    }
    const a: Active = {
      running: undefined,
      watchers: undefined,
      interruptedEarly: undefined,
      seq: 0,
      inFlight: new Map(),
      inFlightBytes: 0,
      paused: false,
      stream: null,
      log: undefined,
      text: '',
      timer: undefined,
    };
    this.active.set(cmd, a);
    this.log.debug({ cmd, workdir: dir }, 'command started');
    void this.begin(cmd, a, request, dir);
  }

  private async begin(cmd: string, a: Active, request: CommandRequest, dir: string): Promise<void> {
    const span = tracer.startSpan('worker command', {
      kind: SpanKind.INTERNAL,
      attributes: { 'flotilla.command.id': cmd, 'flotilla.command.workdir': request.workdir },
    });
    // The files' states are taken before the command can touch them.
    a.watchers = await LogfileWatchers.start(
      dir,
      request.logfiles ?? {},
      (p) => this.workdir(p) !== null,
      this.stepUser?.uid,
      (name, text) => this.output(cmd, a, 'o', text, name),
    );
    a.running = runCommand(
      { ...request, workdir: dir, ...(this.stepUser ? { user: this.stepUser } : {}) },
      (stream, text) => this.output(cmd, a, stream, text),
    );
    const pgid = a.running.pgid;
    if (pgid !== undefined) this.reaper?.add(pgid);
    if (a.interruptedEarly?.kill) a.running.kill(a.interruptedEarly.reason);
    else if (a.interruptedEarly) a.running.interrupt(a.interruptedEarly.reason);
    const outcome = await a.running.result;
    if (pgid !== undefined) this.reaper?.remove(pgid);
    span.setAttributes({
      'process.exit.code': outcome.rc ?? -1,
      'flotilla.command.interrupted': outcome.interrupted,
    });
    if (outcome.rc !== 0) span.setStatus({ code: SpanStatusCode.ERROR, message: `rc ${outcome.rc}` });
    span.end();
    await a.watchers.stop();
    this.flush(cmd, a);
    this.active.delete(cmd);
    this.send({ type: 'done', cmd, outcome });
  }

  private output(cmd: string, a: Active, stream: OutputStream, text: string, log?: string): void {
    if (a.stream !== null && (a.stream !== stream || a.log !== log)) this.flush(cmd, a);
    a.stream = stream;
    a.log = log;
    a.text += text;
    if (a.text.length >= BATCH_BYTES) this.flush(cmd, a);
    else a.timer ??= setTimeout(() => this.flush(cmd, a), BATCH_DELAY_MS);
  }

  private flush(cmd: string, a: Active): void {
    clearTimeout(a.timer);
    a.timer = undefined;
    if (a.stream === null || a.text === '') return;
    const seq = ++a.seq;
    const bytes = Buffer.byteLength(a.text);
    a.inFlight.set(seq, bytes);
    a.inFlightBytes += bytes;
    this.send({
      type: 'output',
      cmd,
      seq,
      stream: a.stream,
      text: a.text,
      ...(a.log !== undefined ? { log: a.log } : {}),
    });
    a.text = '';
    a.stream = null;
    a.log = undefined;
    if (!a.paused && a.inFlightBytes > WINDOW_BYTES) {
      a.paused = true;
      a.running?.pause();
      a.watchers?.pause(true);
    }
  }

  private ack(cmd: string, seq: number): void {
    const a = this.active.get(cmd);
    if (!a) return;
    const bytes = a.inFlight.get(seq);
    if (bytes === undefined) return;
    a.inFlight.delete(seq);
    a.inFlightBytes -= bytes;
    if (a.paused && a.inFlightBytes <= WINDOW_BYTES / 2) {
      a.paused = false;
      a.running?.resume();
      a.watchers?.pause(false);
    }
  }
}
