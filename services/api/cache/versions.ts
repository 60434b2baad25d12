// Which tables a read statement reads, and their write versions (migration 0007): what lets
// an API pod keep a rendered page and know, with one small query, that it is still true.
//
// A statement's tables are found in its own text: SQL can only read a table by naming it, and
// every value is a parameter, never text. Any word that is a table's name counts (a column or
// a JSON key that happens to share one only makes a page expire more often). A statement that
// names an unversioned table (logchunks), or a flotilla object this module does not know, has
// no version and is never cached.
import { pgFormat } from '@databases/pg';
import { type SQLQuery, sql } from '../../core/db/pool.js';
import type { RowReader } from '../db-routing/read-pool.js';

/** flotilla functions that read no table: calling them does not make a statement uncacheable. */
const PURE_FUNCTIONS = new Set(['flotilla.try_json']);
/**
 * Totals (migration 0004) are written by the triggers of the table they count, whose version
 * the same statement already depends on, and, for build requests, by those of their claims.
 */
const COUNTS = 'flotilla.count_deltas';
const WORD = /\b(?:flotilla\.)?[a-z_][a-z0-9_]*\b/gi;
const MEMO_LIMIT = 2000;
const RELOAD_MS = 60_000;

export class WriteVersions {
  private readonly memo = new Map<string, readonly string[] | null>();

  /** versioned: tables with a version trigger; tables: every table of public and flotilla. */
  constructor(
    private readonly versioned: ReadonlySet<string>,
    private readonly tables: ReadonlySet<string>,
  ) {}

  get enabled(): boolean {
    return this.versioned.size > 0;
  }

  /** The versioned tables a statement reads, sorted; null when it cannot be versioned. */
  dependencies(text: string): readonly string[] | null {
    const known = this.memo.get(text);
    if (known !== undefined) return known;
    const found = this.scan(text);
    if (this.memo.size >= MEMO_LIMIT) this.memo.clear();
    this.memo.set(text, found);
    return found;
  }

  private scan(text: string): readonly string[] | null {
    if (!this.enabled) return null;
    const deps = new Set<string>();
    let counts = false;
    for (const [w] of text.matchAll(WORD)) {
      const word = w.toLowerCase();
      if (word.startsWith('flotilla.')) {
        if (PURE_FUNCTIONS.has(word)) continue;
        if (word === COUNTS) {
          counts = true;
          continue;
        }
        if (!this.versioned.has(word)) return null;
        deps.add(word);
      } else if (this.tables.has(word)) {
        if (!this.versioned.has(word)) return null;
        deps.add(word);
      }
    }
    if (counts && deps.has('buildrequests')) deps.add('buildrequest_claims');
    return deps.size ? [...deps].sort() : null;
  }
}

/**
 * One row, `v`: the version of these tables now. It names the server's start too: a
 * database restored from a backup, or a replica promoted after losing the last commits,
 * could count up again to a sum a pod has kept under other data; it has started since.
 */
export function versionSql(tables: readonly string[]): SQLQuery {
  return sql`SELECT coalesce(sum(n), 0)::text || '@' || extract(epoch FROM pg_postmaster_start_time())::text AS v
             FROM flotilla.count_deltas WHERE scope = '~w' AND tbl = ANY(${tables}::text[])`;
}

/** The statement's rows, each with `write_version`, read in the same snapshot as they are. */
export function withVersion(query: SQLQuery, tables: readonly string[]): SQLQuery {
  return sql`SELECT q.*, (${versionSql(tables)}) AS write_version FROM (${query}) q`;
}

/** A statement's text, as the database receives it. */
export function statementText(query: SQLQuery): string {
  return query.format(pgFormat).text;
}

/**
 * The catalog, read on first use and again every minute while no table is versioned (the
 * API may start before its migrations have run). Until then, nothing is cached.
 */
export class WriteVersionsSource {
  private current = new WriteVersions(new Set(), new Set());
  private loadedAt = 0;
  private loading: Promise<void> | null = null;

  constructor(private readonly db: RowReader) {}

  async get(): Promise<WriteVersions> {
    if (!this.current.enabled && Date.now() - this.loadedAt >= RELOAD_MS) {
      this.loading ??= this.load().finally(() => {
        this.loading = null;
      });
      await this.loading;
    }
    return this.current;
  }

  private async load(): Promise<void> {
    this.loadedAt = Date.now();
    const rows = await this.db.rows<{ name: string; versioned: boolean }>(sql`
      SELECT CASE WHEN n.nspname = 'public' THEN c.relname ELSE n.nspname || '.' || c.relname END AS name,
             EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = c.oid AND g.tgname = 'flotilla_version') AS versioned
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p', 'v', 'm') AND n.nspname IN ('public', 'flotilla')`);
    this.current = new WriteVersions(
      new Set(rows.filter((r) => r.versioned).map((r) => r.name)),
      new Set(rows.map((r) => r.name)),
    );
  }
}
