// The worker's side of running commands for a master: start them in the worker's directory,
// send their output in numbered batches (one stream per batch, so order is kept), hold the
// command's pipes while more than WINDOW bytes await acknowledgement, and report the end.
import { open, realpath } from 'node:fs/promises';
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
import type { Reaper } from './reaper.js';

const tracer = trace.getTracer('flotilla-worker');
const BATCH_BYTES = 32 * 1024;
// An extra log is a file read after the command; a bigger one is cut at this size.
export const MAX_LOGFILE_BYTES = 16 * 1024 * 1024;
const BATCH_DELAY_MS = 10;
export const WINDOW_BYTES = 1024 * 1024;

interface Active {
  running: RunningCommand;
  seq: number;
  inFlight: Map<number, number>;
  inFlightBytes: number;
  paused: boolean;
  stream: OutputStream | null;
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
  ) {}

  get running(): number {
    return this.active.size;
  }

  handle(m: MasterToWorker): void {
    if (m.type === 'start') {
      // The command's span continues the master's trace of the step (when it sent one).
      const parent = propagation.extract(ROOT_CONTEXT, m.trace ?? {});
      context.with(parent, () => this.start(m.cmd, m.request));
    } else if (m.type === 'interrupt') {
      const running = this.active.get(m.cmd)?.running;
      if (m.kill) running?.kill(m.reason);
      else running?.interrupt(m.reason);
    } else if (m.type === 'ack') this.ack(m.cmd, m.seq);
  }

  /**
   * The master is gone (its link closed, or it went silent): nobody will read the output,
   * and the cluster will run its requests elsewhere, so every command dies now.
   */
  lost(): void {
    for (const a of this.active.values()) a.running.kill('lost the master');
  }

  /**
   * The worker is stopping: every command is interrupted, with its usual grace; resolves once
   * all have ended and the master has been told (so it need not wait for them), or after
   * `waitMs`.
   */
  async stopAll(reason: string, waitMs: number): Promise<void> {
    for (const a of this.active.values()) a.running.interrupt(reason);
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
    const a = {
      seq: 0,
      inFlight: new Map(),
      inFlightBytes: 0,
      paused: false,
      stream: null,
      text: '',
      timer: undefined,
    } as unknown as Active;
    this.active.set(cmd, a);
    this.log.debug({ cmd, workdir: dir }, 'command started');
    const span = tracer.startSpan('worker command', {
      kind: SpanKind.INTERNAL,
      attributes: { 'flotilla.command.id': cmd, 'flotilla.command.workdir': request.workdir },
    });
    a.running = runCommand(
      { ...request, workdir: dir, ...(this.stepUser ? { user: this.stepUser } : {}) },
      (stream, text) => this.output(cmd, a, stream, text),
    );
    const pgid = a.running.pgid;
    if (pgid !== undefined) this.reaper?.add(pgid);
    a.running.result.then(async (outcome) => {
      if (pgid !== undefined) this.reaper?.remove(pgid);
      span.setAttributes({
        'process.exit.code': outcome.rc ?? -1,
        'flotilla.command.interrupted': outcome.interrupted,
      });
      if (outcome.rc !== 0) span.setStatus({ code: SpanStatusCode.ERROR, message: `rc ${outcome.rc}` });
      span.end();
      this.flush(cmd, a);
      for (const [name, file] of Object.entries(request.logfiles ?? {}))
        await this.sendLogfile(cmd, a, dir, name, file);
      this.active.delete(cmd);
      this.send({ type: 'done', cmd, outcome });
    });
  }

  /** The contents of an extra log file, as batches of the named log; a missing file sends nothing. */
  private async sendLogfile(cmd: string, a: Active, dir: string, name: string, file: string): Promise<void> {
    const path = resolve(dir, file);
    if (!this.workdir(path)) return;
    let handle: Awaited<ReturnType<typeof open>> | undefined;
    try {
      // The file is the step's: a link out of its directory, or to what its user may not
      // read (the agent's password), is no log.
      const real = await realpath(path);
      if (!this.workdir(real) || !real.startsWith(await realpath(dir))) return;
      handle = await open(real, 'r');
      const st = await handle.stat();
      if (!st.isFile() || (this.stepUser && st.uid !== this.stepUser.uid)) return;
      const buf = Buffer.alloc(Math.min(st.size, MAX_LOGFILE_BYTES));
      const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
      // Whole UTF-8 text, batch by batch (a cut never splits a character: decode first).
      const text = buf.subarray(0, bytesRead).toString('utf8');
      for (let at = 0; at < text.length; at += BATCH_BYTES) {
        this.send({
          type: 'output',
          cmd,
          seq: ++a.seq,
          stream: 'o',
          text: text.slice(at, at + BATCH_BYTES),
          log: name,
        });
      }
    } catch {
      // Buildbot shows no log for a file that is not there.
    } finally {
      await handle?.close();
    }
  }

  private output(cmd: string, a: Active, stream: OutputStream, text: string): void {
    if (a.stream !== null && a.stream !== stream) this.flush(cmd, a);
    a.stream = stream;
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
    this.send({ type: 'output', cmd, seq, stream: a.stream, text: a.text });
    a.text = '';
    a.stream = null;
    if (!a.paused && a.inFlightBytes > WINDOW_BYTES) {
      a.paused = true;
      a.running.pause();
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
      a.running.resume();
    }
  }
}
