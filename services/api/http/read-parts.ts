// The parts of an API pod's read path (each a start and a stop, core/lifecycle/parts.ts), in
// the order buildApp starts them: its own connections for reads, the streaming replicas
// reads may go to, the write notices kept pages are checked against, the kept pages
// themselves, and the raw log downloads' cache on disk.
import type { WwwConfig } from '../../core/config/master-config.js';
import type { ConnectionPool } from '../../core/db/pool.js';
import type { Part } from '../../core/lifecycle/parts.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { PageCache } from '../cache/page-cache.js';
import { replicaPagePolicy } from '../cache/replica-policy.js';
import { WriteVersionsSource } from '../cache/versions.js';
import { WriteNotices } from '../cache/write-notices.js';
import { ReadPool, type RowReader } from '../db-routing/read-pool.js';
import { type ReadRouter, type ReplicaSettings, readRouter } from '../db-routing/replicas.js';
import { defaultRawLogDir, RawLogCache } from '../read/raw-log-cache.js';

// Without a configuration (tests, embedders) kept pages are checked on every request: a
// caller that writes and reads back at once must see its write.
const PAGE_CACHE_DEFAULT = { enabled: true, max_mb: 64, max_staleness_ms: 0 };
const RAW_LOG_CACHE_DEFAULT = { enabled: true, max_mb: 256 };

type PageCacheConfig = WwwConfig['page_cache'];
type RawLogCacheConfig = WwwConfig['raw_log_cache'];

/** Reads go through their own connections with prepared statements; without a URL, through the pool. */
export const readPoolPart = (databaseUrl: string | undefined): Part<ReadPool | null> => ({
  name: 'read pool',
  start: () => (databaseUrl ? new ReadPool(databaseUrl) : null),
  stop: (pool) => pool?.end(),
});

/**
 * Streaming replicas the REST API's reads may go to; null without any. `primaryReads` is
 * where they go when no replica may take them.
 */
export const replicasPart = (opts: {
  settings: ReplicaSettings | undefined;
  db: ConnectionPool;
  primaryReads: RowReader;
  log: Logger;
}): Part<ReadRouter | null> => ({
  name: 'read replicas',
  start: () => {
    const router = readRouter(opts.settings, opts.db, opts.primaryReads, opts.log);
    router?.start();
    return router;
  },
  stop: (router) => router?.end(),
});

/** With a staleness allowed, kept pages are checked against the writes PostgreSQL announces. */
export const writeNoticesPart = (opts: {
  config: PageCacheConfig | undefined;
  databaseUrl: string | undefined;
  router: ReadRouter | null;
  log: Logger;
}): Part<WriteNotices | null> => ({
  name: 'write notices',
  start: () => {
    const cfg = opts.config ?? PAGE_CACHE_DEFAULT;
    if (!cfg.enabled || !opts.databaseUrl || cfg.max_staleness_ms <= 0) return null;
    const notices = new WriteNotices({
      url: opts.databaseUrl,
      maxStalenessMs: cfg.max_staleness_ms,
      onError: (err) => opts.log.warn({ err: err.message }, 'write notices interrupted'),
      positions: opts.router !== null,
    });
    notices.start();
    return notices;
  },
  stop: (notices) => notices?.close(),
});

/** Kept pages; versions are read on the primary: a replica's answer could be as old as its pages. */
export function pageCacheOf(opts: {
  config: PageCacheConfig | undefined;
  primaryReads: RowReader;
  notices: WriteNotices | null;
  router: ReadRouter | null;
}): PageCache | null {
  const cfg = opts.config ?? PAGE_CACHE_DEFAULT;
  if (!cfg.enabled) return null;
  return new PageCache(
    opts.primaryReads,
    new WriteVersionsSource(opts.primaryReads),
    cfg.max_mb * 1024 * 1024,
    opts.notices,
    opts.router ? replicaPagePolicy(opts.router, opts.notices) : null,
  );
}

/** Raw log downloads kept on disk; without a folder to write to, each is served from the database. */
export const rawLogCachePart = (
  config: RawLogCacheConfig | undefined,
  log: Logger,
): Part<RawLogCache | null> => ({
  name: 'raw log cache',
  start: () => {
    const cfg: { enabled: boolean; max_mb: number; dir?: string | undefined } =
      config ?? RAW_LOG_CACHE_DEFAULT;
    if (!cfg.enabled) return null;
    const dir = cfg.dir;
    return RawLogCache.open(dir ?? defaultRawLogDir(), cfg.max_mb * 1024 * 1024, dir === undefined).catch(
      (err) => {
        log.warn({ err: (err as Error).message }, 'raw log cache off: its folder cannot be used');
        return null;
      },
    );
  },
  stop: (cache) => cache?.close(),
});
