// Running a claimed build request as a build on a worker: the build row and its
// properties, the worker_preparation step, each configured step in turn (a step after a
// halting failure runs only if alwaysRun), the results and state strings as Buildbot writes
// them, and the request's end: complete with the build's results, or handed back for another
// try when the build ends RETRY (its worker or its master went away).
import { type Context, context, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Redis } from 'ioredis';
import type { BuilderConfig, MasterConfig, StepConfig } from '../../core/config/master-config.js';
import {
  addLog,
  addStepURL,
  completeBuildRequests,
  type DataContext,
  finishBuild,
  finishStep,
  type LogCodec,
  newBuild,
  newStep,
  setBuildProperties,
  setBuildProperty,
  setBuildStateString,
  setStepStateString,
  startStep,
  transact,
  unclaimBuildRequests,
} from '../../core/data/index.js';
import { sql } from '../../core/db/pool.js';
import { RESULT_NAMES, Results, worst } from '../../core/results.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { addBuildsetForSourceStamps } from '../schedulers/buildset.js';
import type { RemoteCommand, WorkerConnection } from '../workers/connection.js';
import { interpolate, type Properties } from './interpolate.js';
import { LogWriter } from './log-writer.js';
import { initialProperties } from './properties.js';
import { buildStateString, combine, commandSummary, entersBuildSummary, stepSummary } from './summary.js';

function render(command: string | readonly string[], props: Properties): string | string[] {
  return typeof command === 'string'
    ? interpolate(command, props)
    : command.map((a) => interpolate(a, props));
}

export interface ClaimedRequest {
  brid: number;
  bsid: number;
  builderid: number;
  builder: BuilderConfig;
  /** The trace of whatever asked for this build (a force request), when it is known. */
  traceContext?: Context;
}

export interface BuildMetrics {
  buildFinished(results: number, seconds: number): void;
  linesStored(lines: number): void;
}

export interface RunnerDeps {
  ctx: DataContext;
  redis: Redis;
  config: MasterConfig;
  masterid: () => number;
  workerId: (name: string) => number | undefined;
  codec: LogCodec;
  log: Logger;
  /** A log finished: queue its compression. */
  onLogFinished?: (logid: number) => void;
  metrics?: BuildMetrics;
}

interface Running {
  buildid: number;
  brid: number;
  worker: WorkerConnection;
  command: RemoteCommand | null;
  /** The number of the step being run (0 before the first). */
  step: number;
  /** The stop, and the step it came during (that step's command must not run on). */
  stopped: { reason: string; results: number; step: number } | null;
  lost: boolean;
}

interface StepOutcome {
  results: number;
  summary: string;
  /** The summary the build shows, when it differs from the step's (a trigger's). */
  buildSummary?: string;
}

const TRIGGER_POLL_MS = 500;
// A stop can arrive between the build's row being committed and this master registering the
// build (the API sees the build as soon as it commits); such stops wait this long for it.
const EARLY_STOP_MS = 60_000;
const tracer = trace.getTracer('flotilla-master');

/**
 * The results the current step ends with if the build was lost, or stopped during this step
 * (steps after a stop run only when alwaysRun, and then in full); null otherwise.
 */
function interruption(r: Running): number | null {
  if (r.lost) return Results.RETRY;
  return r.stopped && r.stopped.step === r.step ? r.stopped.results : null;
}

export class BuildRunner {
  private readonly running = new Map<number, Running>();
  /**
   * Builds handed to a worker whose build row is still being written, by worker name: they
   * occupy the worker from the moment run() is called, so that a distribution pass (or the
   * next one) never hands the same slot out twice while newBuild commits.
   */
  private readonly starting = new Map<string, number>();
  private startingTotal = 0;
  private readonly earlyStops = new Map<number, { reason: string; results: number; at: number }>();

  constructor(private readonly deps: RunnerDeps) {}

  get count(): number {
    return this.running.size;
  }

  onWorker(name: string): number {
    let n = this.starting.get(name) ?? 0;
    for (const r of this.running.values()) if (r.worker.name === name) n++;
    return n;
  }

  /** Count a build against its worker until it runs (or fails to start); the release is idempotent. */
  private reserve(name: string): () => void {
    this.starting.set(name, (this.starting.get(name) ?? 0) + 1);
    this.startingTotal++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const n = (this.starting.get(name) ?? 1) - 1;
      if (n > 0) this.starting.set(name, n);
      else this.starting.delete(name);
      this.startingTotal--;
    };
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
    r.stopped ??= { reason, results, step: r.step };
    r.command?.interrupt(reason);
    return true;
  }

  /** Stop every build (the master is leaving): they end RETRY and run again elsewhere. */
  abandonAll(reason: string): void {
    for (const r of this.running.values()) {
      r.lost = true;
      r.command?.interrupt(reason);
    }
  }

  async whenIdle(): Promise<void> {
    while (this.running.size > 0 || this.startingTotal > 0) await new Promise((r) => setTimeout(r, 100));
  }

  /** Run the build in a span (a child of the request's trace when known), timed and counted. */
  async run(req: ClaimedRequest, worker: WorkerConnection): Promise<number> {
    // Before anything is awaited: the caller's next look at the worker must see it taken.
    const release = this.reserve(worker.name);
    const started = performance.now();
    const parent = req.traceContext ?? context.active();
    return tracer.startActiveSpan(
      `build ${req.builder.name}`,
      {
        attributes: {
          'flotilla.builder': req.builder.name,
          'flotilla.buildrequest': req.brid,
          'flotilla.worker': worker.name,
        },
      },
      parent,
      async (span) => {
        try {
          const results = await this.runBuild(req, worker, release);
          span.setAttribute('flotilla.results', RESULT_NAMES[results] ?? String(results));
          if (results === Results.EXCEPTION) span.setStatus({ code: SpanStatusCode.ERROR });
          this.deps.metrics?.buildFinished(results, (performance.now() - started) / 1000);
          return results;
        } finally {
          release();
          span.end();
        }
      },
    );
  }

  private async runBuild(
    req: ClaimedRequest,
    worker: WorkerConnection,
    started: () => void,
  ): Promise<number> {
    const { ctx, log } = this.deps;
    const workerid = this.deps.workerId(worker.name) ?? null;
    const workerCfg = this.deps.config.workers.find((w) => w.name === worker.name);
    const { buildid, number } = await transact(ctx, (tx) =>
      newBuild(tx, {
        builderid: req.builderid,
        buildrequestid: req.brid,
        workerid,
        masterid: this.deps.masterid(),
      }),
    );
    trace.getActiveSpan()?.setAttributes({ 'flotilla.buildid': buildid, 'flotilla.number': number });
    const r: Running = {
      buildid,
      brid: req.brid,
      worker,
      command: null,
      step: 0,
      stopped: null,
      lost: false,
    };
    this.running.set(buildid, r);
    started();
    const early = this.earlyStops.get(buildid);
    if (early) {
      this.earlyStops.delete(buildid);
      r.stopped = { reason: early.reason, results: early.results, step: 0 };
    }
    log.info({ buildid, builder: req.builder.name, number, worker: worker.name }, 'build started');
    try {
      let props = await transact(ctx, async (tx) => {
        const p = await initialProperties(tx, {
          buildid,
          number,
          bsid: req.bsid,
          builderName: req.builder.name,
          builderProperties: req.builder.properties,
          workerName: worker.name,
          workerProperties: workerCfg?.properties ?? {},
        });
        await setBuildProperties(tx, buildid, p);
        return p;
      });

      await this.simpleStep(buildid, 'worker_preparation', `worker ${worker.name} ready`, Results.SUCCESS);
      let results: number = Results.SUCCESS;
      let terminated = false;
      const summaries: string[] = [];
      for (const step of req.builder.steps) {
        if ((terminated || r.lost || r.stopped) && !step.alwaysRun) continue;
        if (r.lost) break;
        const outcome = await tracer.startActiveSpan(`step ${this.defaultName(step)}`, async (span) => {
          try {
            const o = await this.runStep(r, req, step, props);
            span.setAttribute('flotilla.results', RESULT_NAMES[o.results] ?? String(o.results));
            return o;
          } finally {
            span.end();
          }
        });
        props = await this.currentProperties(buildid);
        if (entersBuildSummary(step, outcome.results)) {
          summaries.push(outcome.buildSummary ?? outcome.summary);
          await transact(ctx, (tx) => setBuildStateString(tx, buildid, summaries.join(' ')));
        }
        const c = combine(step, outcome.results, results);
        results = c.results;
        terminated ||= c.terminate;
      }
      if (r.stopped) results = worst(results, r.stopped.results);
      if (r.lost) results = Results.RETRY;
      const state = buildStateString(results, r.stopped && !r.lost ? r.stopped.reason : null, summaries);
      await transact(ctx, async (tx) => {
        await setBuildStateString(tx, buildid, state);
        await finishBuild(tx, buildid, results);
        // A RETRY goes back to the pool; anything else completes the request.
        if (results === Results.RETRY) await unclaimBuildRequests(tx, [req.brid], this.deps.masterid());
        else await completeBuildRequests(tx, [req.brid], results);
      });
      log.info({ buildid, results: RESULT_NAMES[results] ?? results, state }, 'build finished');
      return results;
    } catch (err) {
      log.error({ buildid, err }, 'build failed with an internal error');
      await transact(ctx, async (tx) => {
        await setBuildStateString(tx, buildid, `exception ${(err as Error).message}`.slice(0, 1000));
        await finishBuild(tx, buildid, Results.EXCEPTION);
        await completeBuildRequests(tx, [req.brid], Results.EXCEPTION);
      }).catch((e) => log.error({ buildid, err: e }, 'could not finish the build'));
      return Results.EXCEPTION;
    } finally {
      this.running.delete(buildid);
    }
  }

  private async currentProperties(buildid: number): Promise<Properties> {
    const rows = await this.deps.ctx.db.query(
      sql`SELECT name, flotilla.try_json(value) AS v, source FROM build_properties WHERE buildid = ${buildid}`,
    );
    return Object.fromEntries(rows.map((p) => [p.name, [p.v, p.source] as const]));
  }

  private async simpleStep(buildid: number, name: string, state: string, results: number): Promise<void> {
    await transact(this.deps.ctx, async (tx) => {
      const s = await newStep(tx, buildid, name);
      await startStep(tx, s.stepid);
      await setStepStateString(tx, s.stepid, state);
      await finishStep(tx, s.stepid, results);
    });
  }

  private shouldRun(step: StepConfig, props: Properties): boolean {
    const c = step.doStepIf;
    if (c === undefined || c === true) return true;
    if (c === false) return false;
    const v = props[c.property]?.[0];
    return c.equals === undefined ? Boolean(v) : JSON.stringify(v) === JSON.stringify(c.equals);
  }

  private hidden(step: StepConfig, results: number): boolean {
    const h = step.hideStepIf;
    if (h === undefined || typeof h === 'boolean') return h === true;
    return h.results.includes(results);
  }

  private defaultName(step: StepConfig): string {
    if (step.name) return step.name;
    return step.type === 'shell' ? 'shell' : step.type === 'set_property' ? 'setproperty' : 'trigger';
  }

  private async runStep(
    r: Running,
    req: ClaimedRequest,
    step: StepConfig,
    props: Properties,
  ): Promise<StepOutcome> {
    const { ctx } = this.deps;
    r.step++;
    const s = await transact(ctx, (tx) => newStep(tx, r.buildid, this.defaultName(step)));
    // Buildbot summarizes the command as rendered, properties filled in.
    const text =
      step.descriptionDone ??
      step.description ??
      (step.type === 'trigger'
        ? `triggered ${step.schedulers.join(', ')}`
        : commandSummary(render(step.command, props)));
    if (!this.shouldRun(step, props)) {
      const summary = stepSummary(text, Results.SKIPPED);
      await transact(ctx, async (tx) => {
        await startStep(tx, s.stepid);
        await setStepStateString(tx, s.stepid, summary);
        await finishStep(tx, s.stepid, Results.SKIPPED, this.hidden(step, Results.SKIPPED));
      });
      return { results: Results.SKIPPED, summary };
    }
    await transact(ctx, async (tx) => {
      await startStep(tx, s.stepid);
      await setStepStateString(tx, s.stepid, step.description ?? text ?? 'running');
      for (const u of step.urls)
        await addStepURL(tx, s.stepid, interpolate(u.name, props), interpolate(u.url, props));
    });
    const outcome =
      step.type === 'trigger'
        ? await this.trigger(r, req, step, props)
        : await this.command(r, req, step, props, s.stepid, text);
    await transact(ctx, async (tx) => {
      await setStepStateString(tx, s.stepid, outcome.summary);
      await finishStep(tx, s.stepid, outcome.results, this.hidden(step, outcome.results));
    });
    return outcome;
  }

  private async command(
    r: Running,
    req: ClaimedRequest,
    step: Extract<StepConfig, { type: 'shell' | 'set_property' }>,
    props: Properties,
    stepid: number,
    text: string | null,
  ): Promise<StepOutcome> {
    const { ctx, redis } = this.deps;
    const logid = await transact(ctx, (tx) => addLog(tx, stepid, 'stdio', 's'));
    const stored = this.deps.metrics ? (n: number) => this.deps.metrics!.linesStored(n) : undefined;
    const writer = new LogWriter(ctx, redis, logid, 's', this.deps.codec, stored);
    const command = render(step.command, props);
    const env = Object.fromEntries(Object.entries(step.env).map(([k, v]) => [k, interpolate(v, props)]));
    let stdout = '';
    // Extra named logs (text, or HTML when the name says so), created when their text arrives.
    const logfiles = step.type === 'shell' ? step.logfiles : {};
    const extra = new Map<string, Promise<LogWriter>>();
    const extraLog = (name: string) => {
      let w = extra.get(name);
      if (!w) {
        const type = /\.html?$/i.test(name) ? 'h' : 't';
        w = transact(ctx, (tx) => addLog(tx, stepid, name, type)).then(
          (id) => new LogWriter(ctx, redis, id, type, this.deps.codec, stored),
        );
        extra.set(name, w);
      }
      return w;
    };
    // A stop (or the worker's loss) that came while the step was being set up: the command
    // never starts, or it would run to its end with nobody left to interrupt it.
    const before = interruption(r);
    if (before !== null) {
      await writer.finish();
      this.deps.onLogFinished?.(logid);
      const results = before;
      return { results, summary: stepSummary(text, results) };
    }
    r.command = r.worker.run(
      {
        command,
        workdir: `${req.builder.name}/${step.workdir ?? 'build'}`,
        env,
        timeout: step.timeout,
        ...(Object.keys(logfiles).length ? { logfiles } : {}),
      },
      async (stream, chunk, log) => {
        if (log !== undefined) {
          if (Object.hasOwn(logfiles, log)) await (await extraLog(log)).write(stream, chunk);
          return;
        }
        if (step.type === 'set_property' && stream === 'o') stdout += chunk;
        await writer.write(stream, chunk);
      },
    );
    const end = await r.command.done;
    r.command = null;
    await writer.finish();
    this.deps.onLogFinished?.(logid);
    for (const w of extra.values()) {
      const lw = await w;
      await lw.finish();
      this.deps.onLogFinished?.(lw.logid);
    }

    let results: number;
    if ('lost' in end) {
      r.lost = true;
      results = Results.RETRY;
    } else if (end.interrupted && r.stopped) results = r.stopped.results;
    else if (end.interrupted) results = Results.RETRY;
    else results = end.rc === 0 ? Results.SUCCESS : Results.FAILURE;

    if (step.type === 'set_property' && results === Results.SUCCESS) {
      const value = step.strip ? stdout.trim() : stdout;
      await transact(ctx, (tx) =>
        setBuildProperty(tx, r.buildid, step.property, value, 'SetPropertyFromCommand Step'),
      );
      return { results, summary: step.descriptionDone ?? `property '${step.property}' set` };
    }
    return { results, summary: stepSummary(text, results) };
  }

  private async trigger(
    r: Running,
    req: ClaimedRequest,
    step: Extract<StepConfig, { type: 'trigger' }>,
    props: Properties,
  ): Promise<StepOutcome> {
    const { ctx, config } = this.deps;
    const setProps = Object.fromEntries(
      Object.entries(step.set_properties).map(([k, v]) => [
        k,
        [typeof v === 'string' ? interpolate(v, props) : v, 'Trigger'] as const,
      ]),
    );
    const bsids: number[] = [];
    for (const name of step.schedulers) {
      const sched = config.schedulers.find((s) => s.name === name && s.type === 'triggerable')!;
      const added = await transact(ctx, async (tx) => {
        const ss = await tx.q.query(
          sql`SELECT sourcestampid FROM buildset_sourcestamps WHERE buildsetid = ${req.bsid} ORDER BY id`,
        );
        return addBuildsetForSourceStamps(
          tx,
          sched,
          `The Triggerable scheduler named '${name}' triggered this build`,
          ss.map((x) => x.sourcestampid as number),
          {
            properties: setProps,
            waited_for: step.waitForFinish,
            parent_buildid: r.buildid,
            parent_relationship: 'Triggered from',
          },
        );
      });
      bsids.push(added.bsid);
    }
    const base = `triggered ${step.schedulers.join(', ')}`;
    if (!step.waitForFinish) return { results: Results.SUCCESS, summary: base };
    for (;;) {
      const rows = await ctx.db.query(
        sql`SELECT complete, results FROM buildsets WHERE id = ANY(${bsids}::int[])`,
      );
      if (rows.every((x) => x.complete)) {
        const counts = new Map<number, number>();
        for (const x of await ctx.db.query(sql`
          SELECT b.results FROM buildrequests br JOIN builds b ON b.buildrequestid = br.id
          WHERE br.buildsetid = ANY(${bsids}::int[]) AND b.results IS NOT NULL`)) {
          counts.set(x.results, (counts.get(x.results) ?? 0) + 1);
        }
        const results = rows.reduce<number>((acc, x) => worst(acc, x.results as number), Results.SUCCESS);
        const detail = [...counts.entries()]
          .sort(([a], [b]) => a - b)
          .map(([res, n]) => `${n} ${RESULT_NAMES[res]}`);
        const summary = detail.length ? `${base}, ${detail.join(', ')}` : base;
        return { results, summary, buildSummary: summary };
      }
      if (r.stopped || r.lost)
        return {
          results: r.lost ? Results.RETRY : r.stopped!.results,
          summary: stepSummary(base, Results.CANCELLED),
        };
      await new Promise((res) => setTimeout(res, TRIGGER_POLL_MS));
    }
  }
}
