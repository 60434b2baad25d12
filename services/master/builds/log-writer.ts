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
import { appendLog, type DataContext, finishLog, type LogCodec, transact } from '../../core/data/index.js';
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
    const lines = split.map((l) => storedLine(l, this.cleaner, this.maxLine));
    const body = `${(this.type === 's' ? lines.map((l) => stream + l) : lines).join('\n')}\n`;
    const range = await transact(this.ctx, (tx) => appendLog(tx, this.logid, body, { codec: this.codec }));
    this.lines += lines.length;
    this.onStored?.(lines.length);
    for (const o of this.observers) for (const l of lines) o(stream, l);
    this.toLiveStream(range.first_line, body);
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

  /** Store what is left of unfinished lines, then mark the log finished. */
  async finish(): Promise<void> {
    for (const s of ['o', 'e', 'h'] as const) {
      const rest = this.splitters[s].flush();
      if (rest) await this.store([rest], s);
    }
    await transact(this.ctx, (tx) => finishLog(tx, this.logid));
  }
}
