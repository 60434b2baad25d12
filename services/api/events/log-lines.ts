// Live log lines, an opt-in event path of ours: a subscription to `logs/<logid>/lines`
// receives the lines the master appends to that open log, read from the log's live stream
// in Redis that its log writer fills (core/logs/live-stream.ts). One
// reader per pod polls every tailed log in one XREAD, every interval, and sends each log's
// new lines as one event per poll: {"logid", "firstline", "content"}, the shape of the REST
// API's logchunks, so a client appends them the way it appends a chunk it fetched.
//
// A tail starts at the stream's newest entry when its first subscriber arrives; what came
// before is read over REST (/logs/<logid>/contents). firstline tells a client where a batch
// belongs, so a gap is visible and can be fetched. These events carry no id: they are not
// kept in the event stream and cannot be resumed (the REST API has every stored line).
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type { LogLinesMessage } from '../../core/api-shapes.js';
import { streamField } from '../../core/events/stream.js';
import { logStreamKey as logStream } from '../../core/logs/live-stream.js';
import type { HubEvent, Subscription } from './types.js';

// Entries read per log per poll; each entry is one append of the master (a piece of output).
const ENTRIES_PER_POLL = 200;
// Logs per XREAD: a poll reads every tailed log, this many at a time, so that neither the
// command nor anything building it grows with the number of tails (the arguments were once
// spread into one call, and 100,000 tails overflowed the stack: test/api/events/flood.test.ts).
const LOGS_PER_READ = 500;

interface Tail {
  logid: number;
  /** The last stream id read; null until the starting point is known. */
  cursor: string | null;
  subs: Set<Subscription>;
}

interface Batch {
  firstline: number;
  content: string;
}

export class LogTailer {
  private readonly tails = new Map<number, Tail>();
  private timer: NodeJS.Timeout | null = null;
  private polling = false;

  constructor(
    private readonly redis: Redis,
    private readonly intervalMs: number,
    private readonly log: FastifyBaseLogger,
  ) {}

  add(sub: Subscription, logid: number): void {
    let tail = this.tails.get(logid);
    if (!tail) {
      const fresh: Tail = { logid, cursor: null, subs: new Set() };
      this.tails.set(logid, fresh);
      tail = fresh;
      this.redis
        .xrevrange(logStream(logid), '+', '-', 'COUNT', 1)
        .then((entries) => {
          fresh.cursor = (entries as [string, string[]][])[0]?.[0] ?? '0-0';
        })
        .catch((err: Error) => {
          this.log.warn({ logid, err: err.message }, 'log tail could not start');
          fresh.cursor = '0-0';
        });
    }
    tail.subs.add(sub);
    if (!this.timer) {
      this.timer = setInterval(() => void this.poll(), this.intervalMs);
      this.timer.unref();
    }
  }

  remove(sub: Subscription, logid: number): void {
    const tail = this.tails.get(logid);
    if (!tail) return;
    tail.subs.delete(sub);
    if (tail.subs.size === 0) this.tails.delete(logid);
    if (this.tails.size === 0) this.stop();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  subscriptionCount(): number {
    let n = 0;
    for (const t of this.tails.values()) n += t.subs.size;
    return n;
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const ready: Tail[] = [];
      for (const t of this.tails.values()) if (t.cursor !== null) ready.push(t);
      for (let at = 0; at < ready.length; at += LOGS_PER_READ)
        await this.read(ready.slice(at, at + LOGS_PER_READ));
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'log tails could not be read');
    } finally {
      this.polling = false;
    }
  }

  /** One XREAD of some tails' streams, their new lines sent. */
  private async read(tails: Tail[]): Promise<void> {
    const byKey = new Map<string, Tail>();
    const args: (string | number)[] = ['COUNT', ENTRIES_PER_POLL, 'STREAMS'];
    for (const t of tails) byKey.set(logStream(t.logid), t);
    for (const key of byKey.keys()) args.push(key);
    for (const t of tails) args.push(t.cursor!);
    const reply = (await this.redis.call('XREAD', args)) as [string, [string, string[]][]][] | null;
    for (const [key, entries] of reply ?? []) {
      const tail = byKey.get(key);
      // A tail dropped meanwhile (its last subscriber left) is no longer read.
      if (!tail || entries.length === 0 || this.tails.get(tail.logid) !== tail) continue;
      tail.cursor = entries.at(-1)![0];
      for (const batch of batches(entries)) this.send(tail, batch);
    }
  }

  private send(tail: Tail, batch: Batch): void {
    const message: LogLinesMessage = {
      logid: tail.logid,
      firstline: batch.firstline,
      content: batch.content,
    };
    const e: HubEvent = {
      key: `logs/${tail.logid}/lines`,
      parts: ['logs', String(tail.logid), 'lines'],
      message,
      id: undefined,
      frames: {},
    };
    for (const sub of tail.subs) sub.consumer.deliver(sub, e);
  }
}

/** The entries' lines, consecutive runs joined into one batch each. */
function batches(entries: [string, string[]][]): Batch[] {
  const out: Batch[] = [];
  let cur: Batch | null = null;
  let next = -1;
  for (const [, fields] of entries) {
    const field = (name: string) => streamField(fields, name) ?? '';
    const firstline = Number(field('first'));
    const content = field('text');
    if (cur && firstline === next) {
      cur.content += content;
    } else {
      cur = { firstline, content };
      out.push(cur);
    }
    next = firstline + countLines(content);
  }
  return out;
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}
