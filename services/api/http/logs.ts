// Log contents by line range, raw log downloads and build data downloads. A range read
// fetches only the chunks that overlap the range; the tail of a log still being written
// comes from its live stream in Redis when the stream holds it; a raw download streams
// chunk by chunk, so a log of any size is served in constant memory.
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { type ConnectionPool, sql } from '../../core/db/pool.js';
import { contentsRange, RawLogStream, readLogLines } from '../../core/logs/lines.js';
import { readLogStreamLines } from '../../core/logs/live-stream.js';
import type { LineRange, LogChunkRow, LogType } from '../../core/logs/types.js';
import type { RowReader } from '../query/read-pool.js';
import { type Read, type Stamp, stampOf, versioned } from '../query/run.js';
import type { ResultSpec } from '../query/spec.js';
import type { WriteVersions } from '../query/versions.js';
import type { Endpoint, PathArgs } from '../registry/model.js';
import { notFound } from './errors.js';
import { etagOf, notModified } from './reply.js';

interface LogRow {
  id: number;
  num_lines: number;
  type: LogType;
  slug: string;
  complete: number;
}

// Rows per round trip of a streamed download: a few MiB at most in memory.
const STREAM_BATCH = 32;
/** The table a range read takes its lines from, named for the page cache's dependencies. */
const CHUNKS = 'logchunks';

export class LogReader {
  constructor(
    private readonly reads: RowReader,
    /** Raw downloads stream through a cursor on this pool. */
    private readonly db: ConnectionPool,
    /** Where the live streams of open logs are (none: every read goes to PostgreSQL). */
    private readonly live: Redis | null = null,
  ) {}

  private async findLog(
    endpoint: Endpoint,
    args: PathArgs,
    versions: WriteVersions | null = null,
  ): Promise<LogRow & { stamp: Stamp | null }> {
    const conds = endpoint.scope(args);
    // The version is read with the log's row, before its chunks: whatever the chunks read
    // later show is at least as new as it, so a page kept under it can only expire too early.
    const { query, tables } = versioned(
      sql`SELECT a.id, a.num_lines, a.type, a.slug, a.complete FROM logs a WHERE ${sql.join(conds, sql` AND `)}`,
      versions,
      CHUNKS,
    );
    const rows = await this.reads.rows<LogRow & { write_version?: string }>(query);
    if (rows.length === 0) throw notFound();
    const { write_version, ...log } = rows[0]!;
    return { ...log, stamp: stampOf(tables, rows[0]) };
  }

  /** A range of lines; kept by the page cache (a stamp) only once the log is finished. */
  async contents(
    endpoint: Endpoint,
    args: PathArgs,
    spec: ResultSpec,
    versions: WriteVersions | null = null,
  ): Promise<Read> {
    const log = await this.findLog(endpoint, args, versions);
    const range = contentsRange(log.num_lines, spec.offset, spec.limit);
    if (!range) throw notFound();
    const entity: Record<string, unknown> = {
      logid: log.id,
      firstline: range.first_line,
      content: (await this.liveLines(log, range)) ?? (await this.storedLines(log, range)),
    };
    if (spec.fields) for (const k of Object.keys(entity)) if (!spec.fields.includes(k)) delete entity[k];
    return {
      env: { plural: 'logchunks', rows: [entity], total: null },
      stamp: log.complete ? log.stamp : null,
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
    const chunks = (await this.reads.rows(sql`
      SELECT first_line, last_line, content, compressed FROM logchunks
      WHERE logid = ${log.id} AND last_line >= ${range.first_line} AND first_line <= ${range.last_line}
      ORDER BY first_line`)) as LogChunkRow[];
    return readLogLines(chunks, range);
  }

  async raw(
    req: FastifyRequest,
    reply: FastifyReply,
    endpoint: Endpoint,
    args: PathArgs,
  ): Promise<FastifyReply> {
    const log = await this.findLog(endpoint, args);
    // A log only grows, and a finished one never changes: id, length and state identify the body.
    const etag = `W/"log-${log.id}-${log.num_lines}-${log.complete}"`;
    reply
      .header('etag', etag)
      .header('content-type', `${log.type === 'h' ? 'text/html' : 'text/plain'}; charset=utf-8`)
      .header('content-disposition', `attachment; filename=${log.slug}`);
    if (notModified(req, etag)) return reply.code(304).send();
    if (req.method === 'HEAD') return reply.send();
    const rows = this.db.queryStream(
      sql`SELECT first_line, last_line, content, compressed FROM logchunks WHERE logid = ${log.id} ORDER BY first_line`,
      { batchSize: STREAM_BATCH },
    ) as AsyncIterable<LogChunkRow>;
    const stream = new RawLogStream(log.type, log.num_lines);
    async function* body() {
      for await (const row of rows) {
        const piece = stream.push(row);
        if (piece.length > 0) yield Buffer.from(piece.buffer, piece.byteOffset, piece.length);
      }
    }
    return reply.send(Readable.from(body(), { objectMode: false }));
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
    const etag = etagOf(value);
    reply
      .header('etag', etag)
      .header('content-type', 'application/octet-stream; charset=utf-8')
      .header('content-disposition', `attachment; filename=${name}`);
    if (notModified(req, etag)) return reply.code(304).send();
    if (req.method === 'HEAD') return reply.header('content-length', value.length).send();
    return reply.send(value);
  }
}
