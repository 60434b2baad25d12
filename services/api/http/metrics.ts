// What an API pod shows on /metrics (Prometheus text, prom-client). The ingress does not
// route /metrics: it is for the cluster's Prometheus, not for clients.
//
// - flotilla_http_requests_total{method,route,status} and
//   flotilla_http_request_duration_seconds{method,route}: by route, where a route is the
//   API endpoint's pattern (`/api/v2/builds/n:buildid/steps`), never the URL itself, so the
//   number of series stays bounded whatever clients ask for.
// - flotilla_db_pool_connections{pool,state}: the read pool's and the raw downloads' pool's
//   connections in use and idle, and the requests waiting for one.
// - flotilla_event_clients, flotilla_event_subscriptions, flotilla_events_dispatched_total:
//   the event fan-out of this pod.
// - flotilla_page_cache_lookups_total{outcome} (hit, miss, expired), flotilla_page_cache_pages
//   and flotilla_page_cache_bytes: the rendered pages this pod keeps (../cache/page-cache.ts);
//   flotilla_page_cache_checked_hits_total, the hits that cost a version read, and
//   flotilla_write_notices_lag_seconds, how far behind the database the notices may be.
// - flotilla_raw_log_cache_downloads_total{outcome} (hit, miss), flotilla_raw_log_cache_bytes
//   and flotilla_raw_log_cache_logs: finished logs' downloads this pod keeps on disk
//   (raw-log-cache.ts).
// - flotilla_config_info{hash} and flotilla_config_loaded_timestamp_seconds: which
//   configuration the pod runs (core/config/version.ts; registered by server.ts).
// - Node's process metrics (memory, CPU, event loop lag, GC).
import { trace } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { collectProcessMetrics } from '../../core/telemetry/process-metrics.js';
import type { PageCacheStats } from '../cache/page-cache.js';
import type { WriteNoticesStats } from '../cache/write-notices.js';
import type { RawLogCacheStats } from '../read/raw-log-cache.js';

type PoolStats = { total: number; idle: number; waiting: number };

export interface ApiMetricsSources {
  readPool: () => PoolStats | null;
  /** The raw downloads' own pool (ReadPool), where there is one. */
  downloadPool?: () => PoolStats | null;
  events: () => { clients: number; subscriptions: number; dispatched: number } | null;
  pageCache?: () => PageCacheStats | null;
  rawLogCache?: () => RawLogCacheStats | null;
  writeNotices?: () => WriteNoticesStats | null;
}

const routes = new WeakMap<FastifyRequest, string>();

/** Name the route of this request (the endpoint pattern it matched), for metrics and its span. */
export function setMetricsRoute(req: FastifyRequest, route: string): void {
  routes.set(req, route);
  const span = trace.getActiveSpan();
  span?.setAttribute('http.route', route);
  span?.updateName(`${req.method} ${route}`);
}

export class ApiMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly durations: Histogram<'method' | 'route'>;
  /** What the gauges read at scrape time, given by watch() once the pod's parts have started. */
  private sources: ApiMetricsSources = { readPool: () => null, events: () => null };

  constructor() {
    const registers = [this.registry];
    const sources = () => this.sources;
    collectProcessMetrics(this.registry);
    this.requests = new Counter({
      name: 'flotilla_http_requests_total',
      help: 'HTTP requests answered, by route and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.durations = new Histogram({
      name: 'flotilla_http_request_duration_seconds',
      help: 'Time to answer HTTP requests, by route.',
      labelNames: ['method', 'route'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers,
    });
    new Gauge({
      name: 'flotilla_db_pool_connections',
      help: 'The read and download pools: connections in use and idle, and requests waiting for one.',
      labelNames: ['pool', 'state'],
      registers,
      collect() {
        const pools: [string, PoolStats | null | undefined][] = [
          ['read', sources().readPool()],
          ['download', sources().downloadPool?.()],
        ];
        for (const [pool, s] of pools) {
          if (!s) continue;
          this.set({ pool, state: 'in_use' }, s.total - s.idle);
          this.set({ pool, state: 'idle' }, s.idle);
          this.set({ pool, state: 'waiting' }, s.waiting);
        }
      },
    });
    const pages = () =>
      sources().pageCache?.() ?? { hits: 0, checked: 0, misses: 0, expired: 0, pages: 0, bytes: 0 };
    new Counter({
      name: 'flotilla_page_cache_lookups_total',
      help: 'Page cache lookups: hit (served from memory), miss (not kept), expired (a table changed).',
      labelNames: ['outcome'],
      registers,
      collect() {
        const s = pages();
        this.reset();
        this.inc({ outcome: 'hit' }, s.hits);
        this.inc({ outcome: 'miss' }, s.misses);
        this.inc({ outcome: 'expired' }, s.expired);
      },
    });
    new Counter({
      name: 'flotilla_page_cache_checked_hits_total',
      help: 'Hits that needed a version read from the database (the others: write notices alone).',
      registers,
      collect() {
        this.reset();
        this.inc(pages().checked);
      },
    });
    new Gauge({
      name: 'flotilla_write_notices_lag_seconds',
      help: "How far this pod's write notices may be behind the database; -1 while not listening, 0 while idle (no page served for a while: its fences and listening paused).",
      registers,
      collect() {
        const s = sources().writeNotices?.();
        this.set(!s ? -1 : s.idle ? 0 : s.lagMs == null ? -1 : s.lagMs / 1000);
      },
    });
    new Gauge({
      name: 'flotilla_page_cache_pages',
      help: 'Rendered pages this pod keeps.',
      registers,
      collect() {
        this.set(pages().pages);
      },
    });
    new Gauge({
      name: 'flotilla_page_cache_bytes',
      help: 'Memory the kept pages take (approximately, in bytes).',
      registers,
      collect() {
        this.set(pages().bytes);
      },
    });
    const raw = () => sources().rawLogCache?.() ?? { entries: 0, bytes: 0, hits: 0, misses: 0 };
    new Counter({
      name: 'flotilla_raw_log_cache_downloads_total',
      help: "Finished logs' raw downloads: hit (sent from the kept file), miss (read from the database).",
      labelNames: ['outcome'],
      registers,
      collect() {
        const s = raw();
        this.reset();
        this.inc({ outcome: 'hit' }, s.hits);
        this.inc({ outcome: 'miss' }, s.misses);
      },
    });
    new Gauge({
      name: 'flotilla_raw_log_cache_bytes',
      help: 'Disk the kept downloads of finished logs take, in bytes.',
      registers,
      collect() {
        this.set(raw().bytes);
      },
    });
    new Gauge({
      name: 'flotilla_raw_log_cache_logs',
      help: 'Finished logs whose download this pod keeps on disk.',
      registers,
      collect() {
        this.set(raw().entries);
      },
    });
    const events = () => sources().events() ?? { clients: 0, subscriptions: 0, dispatched: 0 };
    new Gauge({
      name: 'flotilla_event_clients',
      help: 'Event clients (websocket and SSE) connected to this pod.',
      registers,
      collect() {
        this.set(events().clients);
      },
    });
    new Gauge({
      name: 'flotilla_event_subscriptions',
      help: "Subscriptions held by this pod's event clients.",
      registers,
      collect() {
        this.set(events().subscriptions);
      },
    });
    new Counter({
      name: 'flotilla_events_dispatched_total',
      help: 'Events this pod received from the bus and fanned out to its clients.',
      registers,
      collect() {
        this.reset();
        this.inc(events().dispatched);
      },
    });
  }

  // The labelled series of each method, route and status, looked up once: labelling on
  // every answer (validating and hashing the labels) was a visible part of a cached answer.
  private readonly series = new Map<
    string,
    {
      requests: ReturnType<ApiMetrics['requests']['labels']>;
      duration: ReturnType<ApiMetrics['durations']['labels']>;
    }
  >();

  private seriesOf(method: string, route: string, status: number) {
    const key = `${method} ${status} ${route}`;
    let s = this.series.get(key);
    if (!s) {
      s = {
        requests: this.requests.labels(method, route, String(status)),
        duration: this.durations.labels(method, route),
      };
      this.series.set(key, s);
    }
    return s;
  }

  /** Read these at scrape time from now on. */
  watch(sources: ApiMetricsSources): void {
    this.sources = sources;
  }

  /** The exposition, for the probe port's /metrics (never the public port: docs/security.md). */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** Count every answer. */
  install(app: FastifyInstance): void {
    app.addHook('onResponse', (req, reply, done) => {
      if (req.url !== '/metrics') {
        const route = routes.get(req) ?? req.routeOptions.url ?? 'unmatched';
        const series = this.seriesOf(req.method, route, reply.statusCode);
        series.requests.inc();
        series.duration.observe(reply.elapsedTime / 1000);
      }
      done();
    });
  }
}
