// The read path's connections. Every read is one generated statement, and PostgreSQL spent
// more time planning them than running them (0.7 ms against 0.45 ms for a page of builds on
// 500k rows, measured with EXPLAIN ANALYZE). Each statement text is therefore prepared once
// per connection, under a name derived from the text, so that PostgreSQL keeps its plan.
// Connections are recycled every few minutes, which also bounds how many statements each
// keeps prepared.
import { pgFormat, type SQLQuery } from '@databases/pg';
import pg from 'pg';
import copyStreams from 'pg-copy-streams';
import { CopyBinaryParser, type CopyRow } from '../../core/db/copy-binary.js';
import { statementName } from '../../core/db/statement-name.js';

const MAX_LIFETIME_S = 300;

export interface ReadOptions {
  /** The statement keeps one generic plan (compile.ts says when that is safe). */
  genericPlan?: boolean;
}

/** Runs one read statement and answers its rows. */
export interface RowReader {
  rows<T = Record<string, unknown>>(query: SQLQuery, opts?: ReadOptions): Promise<T[]>;
  /** A streamed binary COPY (ReadPool.copyRows), where the reader has one. */
  copyRows?(select: SQLQuery, settings: Record<string, string>, signal?: AbortSignal): AsyncIterable<CopyRow>;
}

/** Reads through a pool that prepares nothing (for callers that have no URL of their own). */
export function plainReader(db: { query(q: SQLQuery): Promise<any[]> }): RowReader {
  return { rows: async <T>(q: SQLQuery) => (await db.query(q)) as T[] };
}

/**
 * A prepared read as pg runs it, made without pg's copy of the query's config: given an object,
 * pg copies it property descriptor by descriptor (cloneQueryConfig), 6-8 µs a read in the
 * API's CPU profile at c=1 (load/results/page-cache-miss.md); given the text, it only wraps
 * it. The name is set after, as pg would have read it from the config.
 */
class NamedRead extends pg.Query {
  constructor(config: { name: string; text: string; values: unknown[] }) {
    super(config.text, config.values);
    (this as unknown as { name: string }).name = config.name;
  }
}

function readPool(url: string, max: number, applicationName: string, options?: string): pg.Pool {
  const ssl = new URL(url).searchParams.get('sslmode');
  const pool = new pg.Pool({
    connectionString: url,
    max,
    maxLifetimeSeconds: MAX_LIFETIME_S,
    application_name: applicationName,
    ...(ssl ? {} : { ssl: false }),
    ...(options ? { options } : {}),
  });
  // An idle connection's error surfaces on the next query that needs one.
  pool.on('error', () => {});
  return pool;
}

export class ReadPool implements RowReader {
  private readonly pool: pg.Pool;
  /**
   * Downloads hold a connection for as long as their client takes to read the body: they
   * have connections of their own, so that slow downloaders delay only other downloads,
   * never a page.
   */
  private readonly downloads: pg.Pool;
  /**
   * Connections that keep one generic plan per prepared statement (plan_cache_mode is a
   * setting of the session, not of a statement), for the statements whose plan does not
   * depend on their values (ReadOptions.genericPlan). Opened only when first needed.
   */
  private readonly generic: pg.Pool;

  constructor(url: string, size = 10, downloads = 4) {
    this.pool = readPool(url, size, 'flotilla-api-read');
    this.downloads = readPool(url, downloads, 'flotilla-api-download');
    const options = [process.env.PGOPTIONS, '-c plan_cache_mode=force_generic_plan']
      .filter(Boolean)
      .join(' ');
    this.generic = readPool(url, size, 'flotilla-api-read-generic', options);
  }

  // A query object asked again (the page cache's version reads) is formatted only once.
  private readonly formatted = new WeakMap<SQLQuery, { name: string; text: string; values: unknown[] }>();

  async rows<T = Record<string, unknown>>(query: SQLQuery, opts?: ReadOptions): Promise<T[]> {
    let config = this.formatted.get(query);
    if (!config) {
      const { text, values } = query.format(pgFormat);
      config = { name: statementName(text), text, values: values as unknown[] };
      this.formatted.set(query, config);
    }
    const pool = opts?.genericPlan ? this.generic : this.pool;
    // pg's pool answers a query object with its result (the overload for streams says otherwise).
    const res = await (pool.query(new NamedRead(config)) as unknown as Promise<pg.QueryResult>);
    return res.rows as T[];
  }

  /**
   * The rows of `COPY (select) TO STDOUT (FORMAT binary)`, parsed as they arrive: bytes
   * without the hex text of the ordinary protocol, in constant memory (the connection is
   * read only as fast as the rows are taken). COPY takes no bind parameters, so `select`
   * must have none either; it reads its values with current_setting(name) from `settings`,
   * which are set (as parameters) for the transaction the COPY runs in.
   *
   * The connection is returned when the rows end; when the caller stops early or anything
   * fails, it is closed instead, since it may be in the middle of the COPY. A download can
   * wait for a connection while its client hangs up: `signal`, aborted then, keeps the COPY
   * from starting at all.
   */
  async *copyRows(
    select: SQLQuery,
    settings: Record<string, string>,
    signal?: AbortSignal,
  ): AsyncGenerator<CopyRow> {
    const { text, values } = select.format(pgFormat);
    if (values.length > 0) {
      throw new Error('copyRows: a COPY takes no bind parameters; pass values as settings');
    }
    if (signal?.aborted) return;
    const client = await this.downloads.connect();
    let reusable = false;
    try {
      if (signal?.aborted) {
        reusable = true;
        return;
      }
      await client.query('BEGIN READ ONLY');
      await client.query(
        'SELECT set_config(name, value, true) FROM unnest($1::text[], $2::text[]) AS s(name, value)',
        [Object.keys(settings), Object.values(settings)],
      );
      const stream = client.query(copyStreams.to(`COPY (${text}) TO STDOUT (FORMAT binary)`));
      // pg reports a connection closed mid-COPY to the stream after its reader is gone.
      stream.on('error', () => {});
      const parser = new CopyBinaryParser();
      for await (const chunk of stream as AsyncIterable<Buffer>) yield* parser.push(chunk);
      parser.end();
      await client.query('COMMIT');
      reusable = true;
    } finally {
      client.release(reusable ? undefined : new Error('COPY not finished: connection closed'));
    }
  }

  stats(): { total: number; idle: number; waiting: number } {
    const a = poolStats(this.pool);
    const b = poolStats(this.generic);
    return { total: a.total + b.total, idle: a.idle + b.idle, waiting: a.waiting + b.waiting };
  }

  downloadStats(): { total: number; idle: number; waiting: number } {
    return poolStats(this.downloads);
  }

  async end(): Promise<void> {
    await Promise.all([this.pool.end(), this.downloads.end(), this.generic.end()]);
  }
}

function poolStats(pool: pg.Pool): { total: number; idle: number; waiting: number } {
  return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
}
