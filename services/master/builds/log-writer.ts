// Writing one log as its command runs. Output arrives in arbitrary pieces; only whole lines
// are stored (a partial line waits for its end, as Buildbot's LineBoundaryFinder does, with
// \r\n, \n and \r each ending a line: line-splitter.ts). A line longer than the store keeps is
// cut, in constant time per byte however long it runs, and says so at its end; the cut never
// splits a secret (redact.ts, safeCut). Each piece's lines are in
// PostgreSQL before write() resolves, which is when the worker hears its acknowledgement.
// The same lines then go to the log's live stream in Redis (core/logs/live-stream.ts), from
// which API pods serve the tail; losing Redis loses no line. Nothing here waits for Redis:
// awaiting the stream held every acknowledgement while Redis was away, and the builds with
// it (load/results/faults.md). An append that cannot go now is dropped instead; readers of the
// stream see the gap by its line numbers and read PostgreSQL (readLogStreamLines).
import type { Redis } from 'ioredis';
import {
  appendLog,
  type DataContext,
  finishLog,
  type LogCodec,
  type Tx,
  transact,
} from '../../core/data/index.js';
import { MAX_CHUNK_SIZE } from '../../core/logs/chunking.js';
import { appendToLogStream } from '../../core/logs/live-stream.js';
import type { OutputStream } from '../../core/protocol/messages.js';
import { AS_IS, type LineCleaner, LineSplitter, type SplitLine, storedLine } from './line-splitter.js';

// Appends of one log on their way to its live stream at once; more are dropped. Redis keeps
// up with PostgreSQL when it answers at all, so this bound is met only while Redis hangs
// (a stopped or partitioned server), and it keeps the text held for it small.
const MAX_STREAMING = 8;

export class LogWriter {
  private readonly splitters: Record<OutputStream, LineSplitter> = {
    o: new LineSplitter(),
    e: new LineSplitter(),
    h: new LineSplitter(),
  };
  /** The most UTF-8 bytes of a line's text the store keeps ('s' logs spend one on the stream). */
  private readonly maxLine: number;
  lines = 0;
  /** Live stream appends sent and not yet answered. */
  private streaming = 0;
  /** Live stream appends dropped (Redis away or behind). */
  streamDropped = 0;
  /** Told each line as stored, secrets redacted (a step that reads its output: warning counting). */
  private readonly observers: ((stream: OutputStream, line: string) => void)[] = [];

  constructor(
    private readonly ctx: DataContext,
    private readonly redis: Redis,
    readonly logid: number,
    /** 's' logs prefix each line with its stream; 't' and 'h' logs store the text as it is. */
    private readonly type: 's' | 't' | 'h',
    private readonly codec: LogCodec,
    /** Told how many lines each append stored (the master's log line rate). */
    private readonly onStored?: (lines: number) => void,
    /** Each whole line passes through this before it is stored (secrets redacted: redact.ts). */
    private readonly cleaner: LineCleaner = AS_IS,
  ) {
    this.maxLine = MAX_CHUNK_SIZE - (type === 's' ? 1 : 0);
  }

  /** Hear each line of this log as it is stored, as Buildbot's log observers do. */
  observe(observer: (stream: OutputStream, line: string) => void): void {
    this.observers.push(observer);
  }

  async write(stream: OutputStream, text: string): Promise<void> {
    const lines = this.splitters[stream].push(text);
    if (lines.length > 0) await this.store(lines, stream);
  }

  private async store(split: SplitLine[], stream: OutputStream): Promise<void> {
    const body = this.body(split, stream);
    const range = await transact(this.ctx, (tx) =>
      appendLog(tx, this.logid, body.text, { codec: this.codec }),
    );
    this.stored(body, range.first_line);
  }

  /** Lines as stored, secrets redacted, and the log text they make. */
  private body(split: SplitLine[], stream: OutputStream): Body {
    const lines = split.map((l) => storedLine(l, this.cleaner, this.maxLine));
    const text = `${(this.type === 's' ? lines.map((l) => stream + l) : lines).join('\n')}\n`;
    return { stream, lines, text };
  }

  /** What follows lines' commit: the counts, the observers, the live stream. */
  private stored(b: Body, first: number): void {
    this.lines += b.lines.length;
    this.onStored?.(b.lines.length);
    for (const o of this.observers) for (const l of b.lines) o(b.stream, l);
    this.toLiveStream(first, b.text);
  }

  private toLiveStream(first: number, body: string): void {
    // Not connected: ioredis would hold the append in its offline queue, text and all, until
    // it gave up; the gap it leaves is the same.
    if (this.redis.status !== 'ready' || this.streaming >= MAX_STREAMING) {
      this.streamDropped++;
      return;
    }
    this.streaming++;
    appendToLogStream(this.redis, this.logid, first, body)
      .catch(() => {
        // The live tail is a convenience; PostgreSQL has the lines.
        this.streamDropped++;
      })
      .finally(() => {
        this.streaming--;
      });
  }

  /** Store what is left of unfinished lines and mark the log finished, in one transaction. */
  async finish(): Promise<void> {
    const c = this.closing();
    await transact(this.ctx, c.write);
    c.after();
  }

  /**
   * The log's end as a write of a transaction the caller runs (a step's end: step-writes.ts):
   * what is left of unfinished lines (taken from the splitters now, once, whatever attempts
   * the transaction makes) and the log finished; `after` once it has committed. Before
   * 2026-11-29 the rest and the finish were a transaction each.
   */
  closing(): { write: (tx: Tx) => Promise<void>; after: () => void } {
    const rest: Body[] = [];
    for (const s of ['o', 'e', 'h'] as const) {
      const line = this.splitters[s].flush();
      if (line) rest.push(this.body([line], s));
    }
    let firsts: number[] = [];
    return {
      write: async (tx) => {
        firsts = [];
        for (const b of rest)
          firsts.push((await appendLog(tx, this.logid, b.text, { codec: this.codec })).first_line);
        await finishLog(tx, this.logid);
      },
      after: () => {
        for (const [i, b] of rest.entries()) this.stored(b, firsts[i]!);
      },
    };
  }
}

interface Body {
  stream: OutputStream;
  lines: string[];
  text: string;
}
