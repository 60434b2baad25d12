// Rendered pages, kept per pod and served again while the tables they were read from have
// not been written (write versions, versions.ts).
//
// Why: a page of 50 builds costs PostgreSQL 0.35 ms, and the API about twice that again to
// parse those rows and write them in Buildbot's exact JSON, and to hash the ETag. Clients ask
// the same pages over and over (dashboards, scripts polling a builder), and most of the time
// nothing has changed. A kept page costs a few map lookups, or at most one read of a few count
// rows.
//
// A page is stored with the version read in the same snapshot as its rows. It is served again:
// - from memory, while this pod's write notices (write-notices.ts) show that no write to
//   any of its tables, or to the parts of them it reads (../read/page-keys.ts), has committed since
//   a mark taken before it was read, and the notices are known to be at most
//   `max_staleness_ms` behind the database;
// - otherwise after a fresh read of the version is equal, that is, when no write to any of its
//   tables has committed since, whoever made it (a Buildbot master too). With no notices
//   (max_staleness_ms 0, or the listening connection down) every hit is checked this way, and
//   a kept page is never stale. Versions are per table: a page kept on notices across writes
//   to other parts of its tables is read afresh once it must be checked this way.
// Only whole 200 answers are kept; the URL (path and query, as sent) and the Accept form are
// the key. Bounded by bytes, least recently used first out.
import type { SQLQuery } from '../../core/db/pool.js';
import type { RowReader } from '../db-routing/read-pool.js';
import { versionSql, type WriteVersionsSource } from './versions.js';
import type { WriteNotices } from './write-notices.js';

export interface Page {
  /** The tables whose version `version` is. */
  tables: readonly string[];
  /** What the write notices must not name for the page to be current (../read/page-keys.ts); `tables` when absent. */
  keys?: readonly string[];
  version: string;
  body: string;
  contentType: string;
  etag: string;
  /** The Link header of a collection page with more rows. */
  link: string | null;
  /** The write notices' mark taken before the page was read (PageCache.mark). */
  mark: number;
}

export interface PageCacheStats {
  hits: number;
  /** Hits that were checked with a version read (the others: by write notices alone). */
  checked: number;
  misses: number;
  expired: number;
  pages: number;
  bytes: number;
}

/**
 * What reads on replicas add (../db-routing/replicas.ts; replica-policy.ts): whether a page just read may be kept, and
 * whether the write notices may vouch for a kept page for the current request.
 */
export interface PagePolicy {
  mayKeep(page: Page): boolean;
  noticesCover(): boolean;
}

interface Kept extends Page {
  bytes: number;
}

/** The most a single page may take of the cache. */
const PAGE_SHARE = 16;
/** Distinct sets of tables whose version reads are kept apart (there are a few dozen). */
const MAX_TABLE_SETS = 1000;

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The version reads of one set of tables: the statement, and the reads in flight. */
interface VersionReads {
  query: SQLQuery;
  inFlight: Promise<string | undefined> | null;
  /** Lookups that arrived while a read was in flight, answered by the next one. */
  next: Deferred<string | undefined> | null;
}

export class PageCache {
  private readonly pages = new Map<string, Kept>();
  private bytes = 0;
  private hits = 0;
  private checked = 0;
  private misses = 0;
  private expired = 0;
  private readonly versionReads = new Map<string, VersionReads>();

  constructor(
    private readonly reads: RowReader,
    readonly versions: WriteVersionsSource,
    private readonly maxBytes: number,
    private readonly notices: WriteNotices | null = null,
    private readonly policy: PagePolicy | null = null,
  ) {}

  /** Take before reading a page to store: what its freshness is later judged against. */
  mark(): number {
    return this.notices?.mark() ?? -1;
  }

  /** The kept page for this key if its tables are unchanged; null otherwise (a miss). */
  async lookup(key: string): Promise<Page | null> {
    const page = this.pages.get(key);
    if (!page) {
      this.misses++;
      return null;
    }
    if (
      !this.notices?.unchanged(page.keys ?? page.tables, page.mark) ||
      this.policy?.noticesCover() === false
    ) {
      const mark = this.mark();
      if ((await this.currentVersion(page.tables)) !== page.version) {
        this.drop(key, page);
        this.expired++;
        return null;
      }
      // Unchanged as of a snapshot taken after `mark`: notices since then tell the rest.
      page.mark = mark;
      this.checked++;
    }
    // Most recently used last: Map keeps insertion order.
    this.pages.delete(key);
    this.pages.set(key, page);
    this.hits++;
    return page;
  }

  /**
   * The version of these tables, read by a query sent after this call: one sent earlier may
   * have taken its snapshot before a write this caller has already seen commit. Callers that
   * arrive while a read of the same tables is in flight share the next one, which is sent as
   * soon as that read returns: under concurrency, one query answers many lookups.
   */
  private currentVersion(tables: readonly string[]): Promise<string | undefined> {
    const id = tables.join(',');
    let r = this.versionReads.get(id);
    if (!r) {
      if (this.versionReads.size >= MAX_TABLE_SETS) this.versionReads.clear();
      r = { query: versionSql(tables), inFlight: null, next: null };
      this.versionReads.set(id, r);
    }
    const reads = r;
    const send = (): Promise<string | undefined> => {
      const read = this.reads
        .rows<{ v: string }>(reads.query)
        .then(([row]) => row?.v)
        .finally(() => {
          reads.inFlight = null;
          const waiting = reads.next;
          reads.next = null;
          if (waiting) send().then(waiting.resolve, waiting.reject);
        });
      reads.inFlight = read;
      return read;
    };
    if (!reads.inFlight) return send();
    reads.next ??= deferred();
    return reads.next.promise;
  }

  store(key: string, page: Page): void {
    const bytes = page.body.length + key.length + 256;
    if (bytes > this.maxBytes / PAGE_SHARE) return;
    if (this.policy && !this.policy.mayKeep(page)) return;
    const old = this.pages.get(key);
    if (old) this.drop(key, old);
    for (const [k, p] of this.pages) {
      if (this.bytes + bytes <= this.maxBytes) break;
      this.drop(k, p);
    }
    this.pages.set(key, { ...page, bytes });
    this.bytes += bytes;
  }

  stats(): PageCacheStats {
    return {
      hits: this.hits,
      checked: this.checked,
      misses: this.misses,
      expired: this.expired,
      pages: this.pages.size,
      bytes: this.bytes,
    };
  }

  private drop(key: string, page: Kept): void {
    this.pages.delete(key);
    this.bytes -= page.bytes;
  }
}
