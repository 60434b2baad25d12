// What a master shows on /metrics (Prometheus text, prom-client), beside its jobs' metrics:
//
// - flotilla_builds_running: builds this master runs now.
// - flotilla_buildrequests_queued: requests waiting for a claim on the builders this master
//   serves (read from the unclaimed set at scrape time; the same on every master serving
//   those builders: aggregate with max).
// - flotilla_builds_finished_total{results}: builds this master finished, by Buildbot's
//   result name; flotilla_build_duration_seconds{results} how long they took.
// - flotilla_claims_total{outcome}: claims this master won, or lost to another master (the
//   race is normal; a high share of `lost` means masters compete for the same workers).
// - flotilla_claim_pass_seconds: one pass of the claim loop over the builders.
// - flotilla_log_lines_total: log lines stored (rate() is lines per second).
// - flotilla_workers_connected: workers attached to this master.
// - flotilla_build_write_retries_total: writes of running builds tried again because the
//   database was away (each attempt that failed and was retried counts once).
// - flotilla_config_info{hash} and flotilla_config_loaded_timestamp_seconds: which
//   configuration it runs (core/config/version.ts; registered by master.ts).
// - Node's process metrics (memory, CPU, event loop lag, GC).
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { RESULT_NAMES } from '../core/results.js';
import { collectProcessMetrics } from '../core/telemetry/process-metrics.js';

export interface MasterMetricsSources {
  running: () => number;
  queued: () => Promise<number>;
  workers: () => number;
  claims: () => { won: number; lost: number };
}

export class MasterMetrics {
  readonly registry = new Registry();
  private readonly finished: Counter<'results'>;
  private readonly durations: Histogram<'results'>;
  private readonly passes: Histogram;
  private readonly lines: Counter;
  private readonly retries: Counter;
  /**
   * What the gauges read at scrape time, given by watch() once the parts they read have
   * started (master.ts); until then they read as nothing.
   */
  private sources: MasterMetricsSources = {
    running: () => 0,
    queued: async () => 0,
    workers: () => 0,
    claims: () => ({ won: 0, lost: 0 }),
  };

  constructor() {
    const registers = [this.registry];
    const sources = () => this.sources;
    collectProcessMetrics(this.registry);
    new Gauge({
      name: 'flotilla_builds_running',
      help: 'Builds this master runs now.',
      registers,
      collect() {
        this.set(sources().running());
      },
    });
    new Gauge({
      name: 'flotilla_buildrequests_queued',
      help: "Requests waiting for a claim on this master's builders.",
      registers,
      async collect() {
        try {
          this.set(await sources().queued());
        } catch {
          // No stale value when the database does not answer.
          this.reset();
        }
      },
    });
    new Gauge({
      name: 'flotilla_workers_connected',
      help: 'Workers connected to this master.',
      registers,
      collect() {
        this.set(sources().workers());
      },
    });
    new Counter({
      name: 'flotilla_claims_total',
      help: 'Build request claims made by this master: won, or lost to another master.',
      labelNames: ['outcome'],
      registers,
      collect() {
        const c = sources().claims();
        this.reset();
        this.inc({ outcome: 'won' }, c.won);
        this.inc({ outcome: 'lost' }, c.lost);
      },
    });
    this.finished = new Counter({
      name: 'flotilla_builds_finished_total',
      help: 'Builds this master finished, by results.',
      labelNames: ['results'],
      registers,
    });
    this.durations = new Histogram({
      name: 'flotilla_build_duration_seconds',
      help: 'Duration of the builds this master finished, by results.',
      labelNames: ['results'],
      buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200],
      registers,
    });
    this.passes = new Histogram({
      name: 'flotilla_claim_pass_seconds',
      help: 'Duration of one pass of the claim loop over the builders.',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.lines = new Counter({
      name: 'flotilla_log_lines_total',
      help: 'Log lines stored by this master.',
      registers,
    });
    this.retries = new Counter({
      name: 'flotilla_build_write_retries_total',
      help: 'Writes of running builds tried again because the database was away.',
      registers,
    });
  }

  /** Read these at scrape time from now on. */
  watch(sources: MasterMetricsSources): void {
    this.sources = sources;
  }

  buildWriteRetried(): void {
    this.retries.inc();
  }

  buildFinished(results: number, seconds: number): void {
    const name = RESULT_NAMES[results] ?? String(results);
    this.finished.inc({ results: name });
    this.durations.observe({ results: name }, seconds);
  }

  claimPass(seconds: number): void {
    this.passes.observe(seconds);
  }

  linesStored(n: number): void {
    this.lines.inc(n);
  }
}
