// The builds a master runs: which worker each occupies (from the moment it is handed out,
// before its row exists), stops and losses routed to them (interruption.ts), and waiting
// for them to end. Each build runs in a span (a child of the request's trace when known),
// timed and counted; its lifecycle is run-build.ts's.
import { type Context, context, SpanStatusCode, trace } from '@opentelemetry/api';
import type { BuilderConfig } from '../../core/config/master-config.js';
import { RESULT_NAMES, Results } from '../../core/results.js';
import type { WorkerConnection } from '../workers/connection.js';
import { BuildInterrupts } from './interruption.js';
import { type BuildRequestToRun, runBuild } from './run-build.js';
import { StartGate } from './start-gate.js';
import type { BuildDeps } from './steps/step.js';

export type { BuildDeps, BuildMetrics } from './steps/step.js';

export interface ClaimedRequest extends BuildRequestToRun {
  /** The trace of whatever asked for this build (a force request), when it is known. */
  traceContext?: Context;
}

// A stop can arrive between the build's row being committed and this master registering the
// build (the API sees the build as soon as it commits); such stops wait this long for it.
const EARLY_STOP_MS = 60_000;
// Builds between their row and their first command at once (start-gate.ts): as many as the
// master's pool has connections (10, core/db/pool.ts's default). Measured (load/results/fleet.md, 2026-11-28,
// 1,000 workers, 25,000 pending, load 54-75): with 4, a master's CPU by its first command
// fell from 4.9-6.2 s to 2.9-3.0 s, but the three masters had started 181 builds 35 s after
// it, where without a gate all 1,000 had rows by their first command (82-99 s after spawn):
// four builds use four of the pool's connections, one round trip at a time each. With the
// pool's size, the starts use the whole pool again, and the first ones still finish first.
const STARTS_AT_ONCE = 10;
const occupiedKey = (worker: string, builder: string) => `${worker}\u0000${builder}`;
const tracer = trace.getTracer('flotilla-master');

interface Running {
  brid: number;
  worker: WorkerConnection;
  builder: string;
  interrupts: BuildInterrupts;
}

export class BuildRunner {
  private readonly running = new Map<number, Running>();
  private readonly earlyStops = new Map<number, { reason: string; results: number; at: number }>();
  /** Who waits for builds to end, and for what. */
  private readonly waiters = new Set<{ done: () => boolean; resolve: () => void }>();

  /**
   * The deps of each configuration's builders, by the builder's object: a build runs with the
   * configuration its builder was read from (the distributor's pass), even when a reload came
   * between its claim and its start, so that its steps and its configuration always agree.
   */
  private readonly depsOf = new WeakMap<BuilderConfig, BuildDeps>();
  private readonly gate = new StartGate(STARTS_AT_ONCE);
  /**
   * Builds on each worker, and on each worker for each builder (occupiedKey), from run()'s
   * first line to its end, so that a pass never hands a slot out twice while a build's row is
   * being written; empty when no build runs or is about to. A distribution pass asks for each builder's workers several times: counted
   * over the running builds, that was a thousand builders times three workers times the
   * master's 333 builds a pass (fleet, 2026-11-28 20:01: the pass, its idle workers and these
   * counts were 1.3-2.7 s of each master's profile over the run).
   */
  private readonly occupied = new Map<string, number>();

  constructor(private deps: BuildDeps) {
    for (const b of deps.config.builders) this.depsOf.set(b, deps);
  }

  /**
   * A reloaded configuration (master/reconfigure.ts): builds of its builders run with it; a
   * running build keeps the deps it started with (run() hands them over once).
   */
  reconfigure(next: Pick<BuildDeps, 'config' | 'secrets'>): void {
    this.deps = { ...this.deps, ...next };
    for (const b of next.config.builders) this.depsOf.set(b, this.deps);
  }

  get count(): number {
    return this.running.size;
  }

  /**
   * Builds on this worker, running or about to; of one builder only when `builder` is given
   * (a worker runs one build of a builder at a time, as Buildbot's does: the builder's
   * directory on the worker is one).
   */
  onWorker(name: string, builder?: string): number {
    return this.occupied.get(builder === undefined ? name : occupiedKey(name, builder)) ?? 0;
  }

  /** A build from run()'s first line to its end counts against its worker, and its builder there. */
  private occupy(worker: string, builder: string, by: 1 | -1): void {
    for (const key of [worker, occupiedKey(worker, builder)]) {
      const n = (this.occupied.get(key) ?? 0) + by;
      if (n === 0) this.occupied.delete(key);
      else this.occupied.set(key, n);
    }
  }

  /** Resolves once no build runs or is about to. */
  whenIdle(): Promise<void> {
    return this.until(() => this.occupied.size === 0);
  }

  /** Resolves once no build runs on this worker or is about to. */
  whenWorkerIdle(name: string): Promise<void> {
    return this.until(() => this.onWorker(name) === 0);
  }

  private until(done: () => boolean): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.add({ done, resolve }));
  }

  /** Something ended: wake whoever's wait is over. */
  private settled(): void {
    for (const w of this.waiters) {
      if (!w.done()) continue;
      this.waiters.delete(w);
      w.resolve();
    }
  }

  /** Stop a build this master runs (a stop control message); false if it runs no such build. */
  stop(buildid: number, reason: string, results: number = Results.CANCELLED): boolean {
    const r = this.running.get(buildid);
    if (!r) {
      // Every master hears every stop: most of these are other masters' builds, soon forgotten.
      const now = Date.now();
      for (const [id, s] of this.earlyStops) if (now - s.at > EARLY_STOP_MS) this.earlyStops.delete(id);
      this.earlyStops.set(buildid, { reason, results, at: now });
      return false;
    }
    r.interrupts.stop(reason, results);
    return true;
  }

  /**
   * Stop every build (the master is leaving, or may be expired any moment): they end RETRY and
   * run again elsewhere. `immediate`: their commands are killed at once, without grace.
   */
  abandonAll(reason: string, immediate = false): void {
    for (const r of this.running.values()) r.interrupts.lose(reason, immediate);
  }

  /** The claim on this request is gone: its build stops at once and writes nothing more. */
  loseRequest(brid: number, reason: string): void {
    for (const r of this.running.values()) if (r.brid === brid) r.interrupts.lose(reason, true);
  }

  /** Run the build of a claimed request on this worker; resolves with its results. */
  async run(req: ClaimedRequest, worker: WorkerConnection): Promise<number> {
    // Before anything is awaited: the caller's next look at the worker must see it taken.
    this.occupy(worker.name, req.builder.name, 1);
    const deps = this.depsOf.get(req.builder) ?? this.deps;
    const startedAt = performance.now();
    const interrupts = new BuildInterrupts(worker);
    let buildid: number | null = null;
    const parent = req.traceContext ?? context.active();
    const attributes = {
      'flotilla.builder': req.builder.name,
      'flotilla.buildrequest': req.brid,
      'flotilla.worker': worker.name,
    };
    return tracer.startActiveSpan(`build ${req.builder.name}`, { attributes }, parent, async (span) => {
      try {
        const results = await runBuild(
          deps,
          req,
          worker,
          interrupts,
          (b) => {
            buildid = b.buildid;
            span.setAttributes({ 'flotilla.buildid': b.buildid, 'flotilla.number': b.number });
            this.running.set(b.buildid, { brid: req.brid, worker, builder: req.builder.name, interrupts });
            const early = this.earlyStops.get(b.buildid);
            if (early) {
              this.earlyStops.delete(b.buildid);
              interrupts.stop(early.reason, early.results);
            }
          },
          this.gate,
        );
        span.setAttribute('flotilla.results', RESULT_NAMES[results] ?? String(results));
        if (results === Results.EXCEPTION) span.setStatus({ code: SpanStatusCode.ERROR });
        this.deps.metrics?.buildFinished(results, (performance.now() - startedAt) / 1000);
        return results;
      } finally {
        if (buildid !== null) this.running.delete(buildid);
        this.occupy(worker.name, req.builder.name, -1);
        interrupts.dispose();
        this.settled();
        span.end();
      }
    });
  }
}
