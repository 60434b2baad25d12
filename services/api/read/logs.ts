// Log contents by line range, raw log downloads and build data downloads. A range read
// fetches only the chunks that overlap the range; the tail of a log still being written
// comes from its live stream in Redis when the stream holds it; a raw download streams
// chunk by chunk, so a log of any size is served in constant memory.
//
// A finished log may have moved to the object store (docs/object-store.md): its chunks are
// then bytes of one object, found through an index (flotilla.log_object_chunks) that has the
// columns of logchunks plus where in the object each chunk is. Every read takes the chunks and
// the index in one statement, so a read during the move (which swaps one for the other in one
// transaction) sees one or the other, never neither; the bytes are the same chunks and go
// through the same code (core/logs/lines.ts), so the answers are byte for byte the same.
import type { OutgoingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import {
  logBuildNames,
  logChunksOrIndex,
  logIsMoved,
  RAW_LOG_SETTING,
  rawLogChunks,
} from '../../core/data/log-reads.js';
import { CopyFormatError, type CopyRow, copyInt } from '../../core/db/copy-binary.js';
import { type ConnectionPool, type RowSource, type SQLQuery, sql } from '../../core/db/pool.js';
import { UnavailableError } from '../../core/errors.js';
import { contentsRange, RawLogStream, readLogLines } from '../../core/logs/lines.js';
import { readLogStreamLines } from '../../core/logs/live-stream.js';
import { type IndexedChunk, rowsOfSpan, spanOf, spansOf } from '../../core/logs/log-object.js';
import type { LineRange, LogChunkRow, LogType } from '../../core/logs/types.js';
import type { ObjectStore } from '../../core/objstore/client.js';
import type { WriteVersions } from '../cache/versions.js';
import type { RowReader } from '../db-routing/read-pool.js';
import { notFound } from '../errors/catalogue.js';
import { type Read, type Stamp, stampOf, versioned } from '../query/run.js';
import type { ResultSpec } from '../query/spec.js';
import type { Endpoint, PathArgs } from '../registry/model.js';
import { compress, compressStream, encodedEtag, MIN_BYTES, pickEncoding } from '../reply/compress.js';
import { etagOf, notModified } from '../reply/etag.js';
import { type LinesOfObject, linesOfObject, objectColumn } from './object-lines.js';
import { ObjectSpans } from './object-spans.js';
import { oneAhead } from './one-ahead.js';
import { type RawLogCache, sendKept } from './raw-log-cache.js';

interface LogRow {
  id: number;
  num_lines: number;
  type: LogType;
  slug: string;
  complete: number;
  /** A moved log's object and the index of the lines asked (findLog's `lines`), else null. */
  object?: LinesOfObject | null;
}

// Rows per round trip of a download through a cursor: a few MiB at most in memory.
const STREAM_BATCH = 32;
// A download through a binary COPY (core/data/log-reads.ts: rawLogChunks, RAW_LOG_SETTING).
// Against the cursor, COPY spares the hex text of bytea and the JS strings and decoding it
// cost, and its rows still arrive only as fast as the client takes the body. Measured on a
// 1,000,000-line stdio log (40 MB, 1,000 chunks) on 2 cores, with stdio lines also cut in
// place (lines.ts): 3.2 -> 7.2 downloads a second one at a time, 2.4 -> 6.9 eight at once;
// the API's CPU per download fell from about 430 ms to 130.
// Bytes of a moved log one ranged GET of a download fetches: memory per download stays about
// twice this (one span sent while the next is fetched: one-ahead.ts). (A range read fetches
// exactly the chunks it needs, in one GET.)
const OBJECT_SPAN_BYTES = 4 * 1024 * 1024;

/** A row of logChunksOrIndex: a chunk (content), or an indexed chunk of an object (key). */
type ChunkOrIndex = LogChunkRow | (IndexedChunk & { key: string });
const isIndexed = (r: ChunkOrIndex): r is IndexedChunk & { key: string } =>
  (r as { key?: string | null }).key != null;
const NO_CONTENT = new Uint8Array(0);
/** The table a range read takes its lines from, named for the page cache's dependencies. */
const CHUNKS = 'logchunks';

export class LogReader {
  constructor(
    private readonly reads: RowReader,
    /** Raw downloads stream through a cursor on this pool when `reads` has no copyRows. */
    private readonly db: ConnectionPool,
    /** Where the live streams of open logs are (none: every read goes to PostgreSQL). */
    private readonly live: Redis | null = null,
    /** Finished logs' downloads kept on local disk (none: every download reads the chunks). */
    private readonly rawCache: RawLogCache | null = null,
    /** Where moved logs are (object_store); none configured, a moved log cannot be read. */
    private readonly store: ObjectStore | null = null,
    /** Spans of moved logs kept for range reads (object-spans.ts). */
    private readonly spans = new ObjectSpans(),
  ) {}

  /** The store, or 503: a log moved by masters configured with a store this pod lacks. */
  private objects(): ObjectStore {
    if (!this.store)
      throw new UnavailableError(
        'OBJECT_STORE_UNAVAILABLE',
        'this log is in the object store, and this API has no object_store configured',
      );
    return this.store;
  }

  /** The reads, as core/data's statements take them. */
  private readonly rowSource: RowSource = { query: (q) => this.reads.rows(q) };

  private isMoved(logid: number): Promise<boolean> {
    return logIsMoved(this.rowSource, logid);
  }

  /** Chunk rows of indexed chunks that follow each other, by one ranged GET (or kept spans). */
  private async fetchRows(
    key: string,
    chunks: readonly IndexedChunk[],
    keep = false,
  ): Promise<LogChunkRow[]> {
    const span = spanOf(chunks);
    if (!span) return [];
    const kept = keep ? this.spans.get(key, span) : undefined;
    const bytes = kept ?? (await this.objects().get(key, span));
    if (keep && !kept) this.spans.set(key, span, bytes);
    return rowsOfSpan(chunks, bytes);
  }

  private async findLog(
    endpoint: Endpoint,
    args: PathArgs,
    versions: WriteVersions | null = null,
    /** A range read's: a moved log's index of the lines it asks comes with the log. */
    range: ResultSpec | null = null,
  ): Promise<LogRow & { stamp: Stamp | null; pathIds: Record<string, unknown> }> {
    const conds = endpoint.scope(args);
    const ids = endpoint.pathIds ? sql`, ${endpoint.pathIds(args)} AS path_ids` : sql``;
    // The version is read with the log's row, before its chunks: whatever the chunks read
    // later show is at least as new as it, so a page kept under it can only expire too early.
    // A moved log's index (not versioned) is written as its chunks are deleted (log-objects.ts
    // recordLogObject): the chunks' version covers it, and the page cache keeps the read.
    const select = (more: SQLQuery) =>
      sql`SELECT a.id, a.num_lines, a.type, a.slug, a.complete${ids}${more} FROM logs a WHERE ${sql.join(conds, sql` AND `)}`;
    const { query, tables } = versioned(select(objectColumn(range)), versions, CHUNKS, select(sql``));
    const rows = await this.reads.rows<
      LogRow & { write_version?: string; path_ids?: Record<string, unknown> | null }
    >(query);
    if (rows.length === 0) throw notFound();
    const { write_version, path_ids, ...log } = rows[0]!;
    log.object = linesOfObject(log.object);
    return { ...log, stamp: stampOf(tables, rows[0]), pathIds: { ...path_ids, logid: log.id } };
  }

  /** A range of lines; kept by the page cache (a stamp) only once the log is finished. */
  async contents(
    endpoint: Endpoint,
    args: PathArgs,
    spec: ResultSpec,
    versions: WriteVersions | null = null,
  ): Promise<Read> {
    const log = await this.findLog(endpoint, args, versions, spec);
    const range = contentsRange(log.num_lines, spec.offset, spec.limit);
    if (!range) throw notFound();
    // Only lines the log has are read: a range past its end (offset and limit may be as
    // large as the query allows) holds nothing, and asking the database for it overflowed
    // its integers (a 500: test/api/log-contents-bounds.test.ts).
    const held = { first_line: range.first_line, last_line: Math.min(range.last_line, log.num_lines - 1) };
    const content =
      held.first_line > held.last_line
        ? ''
        : ((await this.liveLines(log, held)) ?? (await this.storedLines(log, held)));
    const entity: Record<string, unknown> = { logid: log.id, firstline: range.first_line, content };
    if (spec.fields) for (const k of Object.keys(entity)) if (!spec.fields.includes(k)) delete entity[k];
    return {
      env: { plural: 'logchunks', rows: [entity], total: null },
      stamp: log.complete ? log.stamp : null,
      pathIds: log.pathIds,
    };
  }

  /** The range from the live stream, if the log is open and the stream holds every line. */
  private async liveLines(log: LogRow, range: LineRange): Promise<string | null> {
    if (!this.live || log.complete || range.first_line >= log.num_lines) return null;
    const last = Math.min(range.last_line, log.num_lines - 1);
    // PostgreSQL answers whatever Redis cannot.
    return readLogStreamLines(this.live, log.id, range.first_line, last).catch(() => null);
  }

  private async storedLines(log: LogRow, range: LineRange): Promise<string> {
    // A moved log: its index of these lines came with it (object-lines.ts).
    if (log.object?.chunks.length)
      return readLogLines(await this.fetchRows(log.object.key, log.object.chunks, true), range);
    const rows = (await this.reads.rows(
      logChunksOrIndex(
        sql`${log.id}`,
        sql`last_line >= ${range.first_line} AND first_line <= ${range.last_line}`,
      ),
    )) as ChunkOrIndex[];
    const indexed = rows.filter(isIndexed).map((r) => ({ ...r, byte_offset: Number(r.byte_offset) }));
    if (indexed.length === 0) return readLogLines(rows as LogChunkRow[], range);
    return readLogLines(await this.fetchRows(indexed[0]!.key, indexed, true), range);
  }

  async raw(
    req: FastifyRequest,
    reply: FastifyReply,
    endpoint: Endpoint,
    args: PathArgs,
  ): Promise<FastifyReply> {
    const log = await this.findLog(endpoint, args);
    // A log only grows, and a finished one never changes (Buildbot's janitor marks it type 'd'
    // before it deletes the chunks): id, length, state and type identify the body.
    // Compressed as it streams when the client accepts it (Buildbot 4.3 wraps its whole REST
    // API in its encoders): an ETag per encoding, as a page's (../reply/compress.ts).
    const encoding = pickEncoding(req.headers['accept-encoding']);
    const identityEtag = `W/"log-${log.id}-${log.num_lines}-${log.complete}-${log.type}"`;
    const etag = encoding ? encodedEtag(identityEtag, encoding) : identityEtag;
    reply
      .header('etag', etag)
      .header('vary', withAcceptEncoding(reply))
      .header('content-type', `${log.type === 'h' ? 'text/html' : 'text/plain'}; charset=utf-8`);
    if (encoding) reply.header('content-encoding', encoding);
    // raw_inline (Buildbot 4.3) is for the browser to show, not to save; its disposition also
    // keeps an html log in the sandbox (../reply/security-headers.ts).
    reply.header('content-disposition', `${endpoint.inline ? 'inline' : 'attachment'}; filename=${log.slug}`);
    if (notModified(req, etag)) return reply.code(304).send();
    if (req.method === 'HEAD') return reply.send();
    const prefix = endpoint.inline ? await this.inlinePrefix(log) : NO_CONTENT;
    // Without a store, a moved log is refused before the answer starts (a 503, not a body cut
    // short). Asked only then: with a store, the read below finds either side by itself.
    if (!this.store && log.complete && (await this.isMoved(log.id))) this.objects();
    const key = { id: log.id, numLines: log.num_lines, type: log.type };
    if (log.complete && this.rawCache) {
      const kept = await this.rawCache.get(key);
      if (kept && encoding) {
        // Read by a stream that closes the file at its end, or when the client goes away.
        const file = kept.file.createReadStream({ start: 0, end: kept.bytes - 1 });
        return reply.send(compressStream(prefix.length ? prefixed(prefix, file) : file, encoding));
      }
      if (kept) {
        // Sent by hand through pooled buffers (sendKept); Fastify still runs onResponse.
        reply.hijack();
        const headers = { ...reply.getHeaders(), 'content-length': String(prefix.length + kept.bytes) };
        reply.raw.writeHead(200, headers as OutgoingHttpHeaders);
        if (prefix.length) reply.raw.write(prefix);
        await sendKept(reply.raw, kept);
        return reply;
      }
    }
    // The first download of a finished log keeps a copy of what it sends.
    const copy = log.complete ? (this.rawCache?.begin(key) ?? null) : null;
    // A download still waiting for a connection when its client hangs up never starts its COPY.
    const gone = new AbortController();
    reply.raw.once('close', () => gone.abort());
    const rows = this.allChunks(log.id, gone.signal);
    // Rows from the database and the store are ours: stdio lines are cut in place.
    const stream = new RawLogStream(log.type, log.num_lines, { ownsContent: true });
    const fetchRows = (key: string, chunks: readonly IndexedChunk[]) => this.fetchRows(key, chunks);
    // A moved log's index is read whole (a few dozen bytes a chunk) before any object byte
    // is fetched, so the database connection is not held while the store answers.
    async function* chunks(): AsyncGenerator<LogChunkRow> {
      const indexed: (IndexedChunk & { key: string })[] = [];
      for await (const row of rows) {
        if (isIndexed(row)) indexed.push(row);
        else yield row;
      }
      if (indexed.length === 0) return;
      yield* oneAhead(spansOf(indexed, OBJECT_SPAN_BYTES), (group) => fetchRows(indexed[0]!.key, group));
    }
    async function* body() {
      let whole = false;
      // The prefix is this answer's, not the log's: the kept copy never holds it.
      if (prefix.length) yield Buffer.from(prefix);
      try {
        for await (const row of chunks()) {
          const piece = stream.push(row);
          if (piece.length === 0) continue;
          const buf = Buffer.from(piece.buffer, piece.byteOffset, piece.length);
          const disk = copy?.write(buf);
          yield buf;
          if (disk) await disk;
        }
        whole = true;
      } finally {
        if (whole) void copy?.commit();
        else copy?.abort();
      }
    }
    const out = Readable.from(body(), { objectMode: false });
    return reply.send(encoding ? compressStream(out, encoding) : out);
  }

  /**
   * What Buildbot (3.10 on, data/logchunks.py get_log_lines_raw_data) puts before a stdio
   * log's lines: `Builder: <name>`, `Build number: <n>`, `Worker name: <name>`, one line
   * each, those known. Only raw_inline has it here: raw keeps Buildbot 3.7's bare text, which
   * 3.7's clients read (docs/compatibility.md).
   */
  private async inlinePrefix(log: LogRow): Promise<Uint8Array> {
    if (log.type !== 's') return NO_CONTENT;
    const r = await logBuildNames(this.rowSource, log.id);
    if (!r) return NO_CONTENT;
    const lines = [
      r.builder !== null ? `Builder: ${r.builder}\n` : '',
      r.number !== null ? `Build number: ${r.number}\n` : '',
      r.worker !== null ? `Worker name: ${r.worker}\n` : '',
    ];
    return Buffer.from(lines.join(''), 'utf8');
  }

  /**
   * Every chunk of a log by first_line, or its object's index: through a binary COPY where
   * the reader has it.
   */
  private allChunks(logid: number, signal: AbortSignal): AsyncIterable<ChunkOrIndex> {
    if (this.reads.copyRows) {
      return chunkRows(this.reads.copyRows(rawLogChunks, { [RAW_LOG_SETTING]: String(logid) }, signal));
    }
    return indexedAsNumbers(
      this.db.queryStream(logChunksOrIndex(sql`${logid}`), {
        batchSize: STREAM_BATCH,
      }) as AsyncIterable<ChunkOrIndex>,
    );
  }

  async buildDataValue(
    req: FastifyRequest,
    reply: FastifyReply,
    endpoint: Endpoint,
    args: PathArgs,
  ): Promise<FastifyReply> {
    const conds = endpoint.scope(args);
    const rows = await this.reads.rows(
      sql`SELECT a.name, a.value FROM build_data a WHERE ${sql.join(conds, sql` AND `)}`,
    );
    if (rows.length === 0) throw notFound();
    const { name, value } = rows[0] as { name: string; value: Buffer };
    // Compressed as a page is (Buildbot 4.3 compresses it too): a small value goes as it is.
    const encoding = value.length >= MIN_BYTES ? pickEncoding(req.headers['accept-encoding']) : null;
    const etag = encoding ? encodedEtag(etagOf(value), encoding) : etagOf(value);
    reply
      .header('etag', etag)
      .header('vary', withAcceptEncoding(reply))
      .header('content-type', 'application/octet-stream; charset=utf-8')
      .header('content-disposition', `attachment; filename=${name}`);
    if (notModified(req, etag)) return reply.code(304).send();
    const body = encoding ? await compress(value, encoding) : value;
    if (encoding) reply.header('content-encoding', encoding);
    if (req.method === 'HEAD') return reply.header('content-length', body.length).send();
    return reply.send(body);
  }
}

/** The Vary header with Accept-Encoding added to what the handler already set (a session's). */
function withAcceptEncoding(reply: FastifyReply): string {
  const vary = reply.getHeader('vary');
  return vary ? `Accept-Encoding, ${vary}` : 'Accept-Encoding';
}

/** `head`, then what `rest` reads (its end or failure ends this too). */
function prefixed(head: Uint8Array, rest: Readable): Readable {
  async function* both() {
    yield Buffer.from(head);
    yield* rest;
  }
  return Readable.from(both(), { objectMode: false });
}

/** rawLogChunks' binary rows as chunk rows, or as indexed chunks of an object. */
async function* chunkRows(rows: AsyncIterable<CopyRow>): AsyncGenerator<ChunkOrIndex> {
  for await (const row of rows) {
    if (row.length !== 7) throw new CopyFormatError(`logchunks COPY row of ${row.length} fields, not 7`);
    const [first, last, compressed, content, key, offset, length] = row;
    const lines = {
      first_line: copyInt(first!),
      last_line: copyInt(last!),
      compressed: copyInt(compressed!),
    };
    if (key)
      yield {
        ...lines,
        key: key.toString('utf8'),
        byte_offset: copyInt(offset!),
        byte_length: copyInt(length!),
      };
    else yield { ...lines, content: content ?? NO_CONTENT };
  }
}

/** pg gives int8 as a string: the offsets of indexed rows as numbers. */
async function* indexedAsNumbers(rows: AsyncIterable<ChunkOrIndex>): AsyncGenerator<ChunkOrIndex> {
  for await (const row of rows) yield isIndexed(row) ? { ...row, byte_offset: Number(row.byte_offset) } : row;
}
