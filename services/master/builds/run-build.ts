// One build, from its row to its end: the build row and its properties, the
// worker_preparation step (where the builder's locks are taken; they are let go when the
// build ends, whatever ends it), each configured step in turn (after a halting failure, a stop or
// a loss, only alwaysRun steps run; after a loss, none), the results and state strings as
// Buildbot writes them, and the request's end: complete with the build's results, or handed
// back for another try when the build ends RETRY (its worker or its master went away).
import { setTimeout as sleep } from 'node:timers/promises';
import { type BuilderConfig, builderDir } from '../../core/config/master-config.js';
import {
  addNewBuildProperties,
  buildsetSourceStamps,
  completeBuildRequests,
  endBuild,
  endStep,
  endUnfinishedSteps,
  getBuildProperties,
  lastBuildOfRequest,
  newBuild,
  newStep,
  openBuildOfRequest,
  setBuildStateString,
  transact,
  unclaimBuildRequests,
} from '../../core/data/index.js';
import { RESULT_NAMES, Results, worst } from '../../core/results.js';
import { type BuildFence, buildContext, ClaimLost, DatabaseAway, ridingOut } from '../claims.js';
import { workerConfig } from '../worker-configs.js';
import type { WorkerConnection } from '../workers/connection.js';
import { holds } from './conditions.js';
import { type BuildInterrupts, interruptedResults } from './interruption.js';
import type { HeldLocks } from './locks.js';
import { initialProperties } from './properties.js';
import { Redactor } from './redact.js';
import { runStep } from './run-step.js';
import { secretNames } from './secret-names.js';
import type { StartGate } from './start-gate.js';
import { StepWrites } from './step-writes.js';
import type { BuildDeps } from './steps/step.js';
import { buildStateString, combine, entersBuildSummary } from './summary.js';

// An internal error's message can be anything (a whole SQL statement, say); the state string
// is what every client lists, so it is cut there.
const MAX_EXCEPTION_STATE = 1000;

export interface BuildRequestToRun {
  brid: number;
  bsid: number;
  builderid: number;
  builder: BuilderConfig;
}

/**
 * Run the build of a claimed request on `worker`; `started` hears the build's id as soon as
 * its row exists (stops can find it from then on). Resolves with the build's results; an
 * internal error ends the build EXCEPTION rather than rejecting.
 *
 * Every write after the build's row goes through the build's fence (claims.ts): a database
 * that is away is waited for while the master's lease holds, output held back meanwhile;
 * past it the build ends RETRY once the database is back; and a build whose claim went to
 * another master (this one was expired while it was away) ends without writing anything.
 * EXCEPTION is for the build's own faults only, never the cluster's.
 */
export async function runBuild(
  deps: BuildDeps,
  req: BuildRequestToRun,
  worker: WorkerConnection,
  interrupts: BuildInterrupts,
  started: (build: { buildid: number; number: number }) => void,
  gate?: StartGate,
): Promise<number> {
  // Through the master's start gate (start-gate.ts says why) from its row to its first command.
  const leaveGate = gate ? await gate.enter() : () => {};
  try {
    return await startedBuild(deps, req, worker, interrupts, started, leaveGate);
  } finally {
    leaveGate();
  }
}

/** runBuild inside the gate: `leaveGate` once its first command goes to the worker (or it waits). */
async function startedBuild(
  deps: BuildDeps,
  req: BuildRequestToRun,
  worker: WorkerConnection,
  interrupts: BuildInterrupts,
  started: (build: { buildid: number; number: number }) => void,
  leaveGate: () => void,
): Promise<number> {
  const { log } = deps;
  const masterid = deps.masterid();
  const workerCfg = workerConfig(deps.config, worker.name);
  // The row and the properties in
  // one transaction: as two, the properties' added BEGIN, COMMIT and the fence's read and
  // record (claims.ts) to a build start's statements (load/results/fleet.md, 2026-11-28
  // 22:30). The claim is the row's INSERT's own condition (newBuild's claimedBy), as every
  // later write checks it in its fence: a master expired since its pass writes no build at
  // all. The first attempt reads the request's newest build; a retry after an outage looks
  // for a row newer than that, which an earlier attempt may have committed, and its
  // properties with it.
  let before: number | undefined;
  const { buildid, number, properties } = await ridingOut(
    () =>
      transact(deps.ctx, async (tx) => {
        if (before === undefined) before = await lastBuildOfRequest(tx.q, req.brid);
        else {
          const earlier = await openBuildOfRequest(tx.q, req.brid, masterid, before);
          if (earlier) return { ...earlier, properties: await getBuildProperties(tx.q, earlier.buildid) };
        }
        const b = await newBuild(tx, {
          builderid: req.builderid,
          buildrequestid: req.brid,
          workerid: deps.workerId(worker.name) ?? null,
          masterid,
          claimedBy: masterid,
        });
        if (!b) throw new ClaimLost(`request ${req.brid}: this master no longer holds it`);
        const p = await initialProperties(tx.q, {
          buildid: b.buildid,
          number: b.number,
          bsid: req.bsid,
          builderName: req.builder.name,
          globalProperties: deps.config.properties,
          builderProperties: req.builder.properties,
          builderDefaultProperties: req.builder.defaultProperties,
          workerName: worker.name,
          workerProperties: workerCfg?.properties ?? {},
          builddir: worker.workerPath(builderDir(req.builder)),
        });
        await addNewBuildProperties(tx, b.buildid, p);
        return { ...b, properties: p };
      }),
    deps.lease,
  );
  started({ buildid, number });
  const fence = buildContext(deps.ctx, buildid, masterid, deps.lease, () =>
    deps.metrics?.buildWriteRetried?.(),
  );
  const bdeps: BuildDeps = { ...deps, ctx: fence.ctx };
  const ctx = fence.ctx;
  log.info({ buildid, builder: req.builder.name, number, worker: worker.name }, 'build started');
  let held: HeldLocks | null = null;
  // The secrets the build's templates use, kept out of what it stores (redact.ts).
  const redactor = new Redactor();
  // What the build's start folds into its first step's row (prepare says why).
  const writes = new StepWrites(ctx);
  try {
    let props = properties;
    const prepared = await prepare(bdeps, req, worker, buildid, interrupts, leaveGate, writes);
    held = prepared.locks;
    // pass and Vault cannot be asked while a template renders: what the steps name, read now.
    // A secret store's round trip is not the database's: the gate's place goes to the next build,
    // and worker_preparation ends before it, not with the first step after it.
    const secrets = secretNames(req.builder);
    if (secrets.length) {
      leaveGate();
      await writes.flush();
    }
    await deps.secrets.load?.(secrets);

    let results: number = Results.SUCCESS;
    let terminated = false;
    const summaries: string[] = [];
    const build = {
      buildid,
      bsid: req.bsid,
      builder: req.builder,
      worker,
      sourcestamps: await buildsetSourceStamps(ctx.db, req.bsid),
      redactor,
      leaveStartGate: leaveGate,
      writes,
    };
    for (const step of req.builder.steps) {
      if (interrupts.lost || !prepared.ready) break;
      if ((terminated || interrupts.stopped) && !holds(step.alwaysRun, props)) continue;
      const { signal, dispose } = interrupts.forStep();
      const outcome = await runStep({ step, props, build, deps: bdeps }, signal).finally(dispose);
      // A first step that sent no command (a master-side step, a skipped one) still lets go.
      leaveGate();
      if (outcome.workerLost) interrupts.lose(outcome.workerLost);
      props = await getBuildProperties(ctx.db, buildid);
      if (entersBuildSummary(step, outcome.results)) {
        summaries.push(outcome.buildSummary ?? outcome.summary);
        await transact(ctx, (tx) => setBuildStateString(tx, buildid, summaries.join(' ')));
      }
      const c = combine(step, outcome.results, results);
      results = c.results;
      terminated ||= c.terminate;
    }
    // No step ran (a build stopped or lost before its first): worker_preparation on its own.
    await writes.flush();
    const stop = interrupts.stopped;
    if (stop) results = worst(results, stop.results);
    if (interrupts.lost) results = Results.RETRY;
    const state = buildStateString(results, stop && !interrupts.lost ? stop.message : null, summaries);
    await finish(deps, fence, req, interrupts, buildid, results, state);
    log.info({ buildid, results: RESULT_NAMES[results] ?? results, state }, 'build finished');
    return results;
  } catch (err) {
    if (err instanceof ClaimLost) {
      // The cluster took the request from this master: whatever runs of it here stops, and
      // nothing is written over what the cluster decided.
      interrupts.lose('this master no longer holds the request', true);
      log.warn({ buildid, err: err.message }, 'build ended: its claim is gone');
      return Results.RETRY;
    }
    const away = err instanceof DatabaseAway;
    if (away) {
      interrupts.lose('the database was out of reach too long', true);
      log.warn(
        { buildid, err: (err as Error).message },
        'build ends RETRY: the database was out of reach too long',
      );
    } else log.error({ buildid, err }, 'build failed with an internal error');
    // worker_preparation, still folded when the fault came before the first step's row, goes
    // before the build's end; folded into a transaction that failed, it went with it.
    if (!away) await writes.flush().catch(() => undefined);
    const results = away ? Results.RETRY : Results.EXCEPTION;
    const state = away
      ? 'retry: the database was out of reach'
      : redactor.cleanLabel(`exception ${(err as Error).message}`).slice(0, MAX_EXCEPTION_STATE);
    // The step the fault interrupted (and its log) ends with the build: nothing stays open.
    await finish(deps, fence, req, interrupts, buildid, results, state, true).catch((e) => {
      if (e instanceof ClaimLost) log.warn({ buildid }, 'build ended: its claim is gone');
      else log.error({ buildid, err: e }, 'could not finish the build');
    });
    return results;
  } finally {
    await held?.release().catch((err) => log.error({ buildid, err }, "could not release the build's locks"));
  }
}

/**
 * The build's last write: its state and results, and its request completed, or handed back
 * for a RETRY. A build whose worker was lost hands its request back only once that worker
 * must have stopped its commands (liveness.ts), so that the request never runs twice at
 * once. This write waits for a database that is away for as long as it takes. `interrupted`:
 * a fault cut the build short, so a step of it (and its logs) may still be open; they end
 * with the build's results in the same write.
 */
async function finish(
  deps: BuildDeps,
  fence: BuildFence,
  req: BuildRequestToRun,
  interrupts: BuildInterrupts,
  buildid: number,
  results: number,
  state: string,
  interrupted = false,
): Promise<void> {
  const lostAt = interrupts.workerLostAt;
  if (results === Results.RETRY && lostAt !== null) {
    const wait = lostAt + deps.lostWorkerWaitMs - Date.now();
    if (wait > 0) await sleep(wait);
  }
  const masterid = deps.masterid();
  const finishedLogs = await transact(fence.finalCtx, async (tx) => {
    const logs = interrupted ? await endUnfinishedSteps(tx, buildid, results) : [];
    await endBuild(tx, buildid, state, results);
    // A RETRY goes back to the pool; anything else completes the request.
    if (results === Results.RETRY) await unclaimBuildRequests(tx, [req.brid], masterid);
    else await completeBuildRequests(tx, [req.brid], results, masterid);
    // Recorded with the write (claims.ts), so that a retry that finds it committed knows them.
    return logs.length ? logs : undefined;
  });
  for (const logid of finishedLogs ?? []) deps.onLogFinished?.(logid);
}

/**
 * The worker_preparation step: the builder's locks taken (the build shows `acquiring locks`
 * meanwhile, as Buildbot's does), then `worker NAME ready`. A stop or loss while waiting ends
 * the step with the interruption's results, and the build runs no step.
 */
async function prepare(
  deps: BuildDeps,
  req: BuildRequestToRun,
  worker: WorkerConnection,
  buildid: number,
  interrupts: BuildInterrupts,
  leaveGate: () => void,
  writes: StepWrites,
): Promise<{ ready: boolean; locks: HeldLocks | null }> {
  const { ctx } = deps;
  const ready = `worker ${worker.name} ready`;
  // Nothing to wait for: the step written and ended in one write (load/results/fleet.md,
  // 2026-11-29 00:40), and that write carried by the first step's row's transaction rather
  // than committed on its own: a fenced transaction (BEGIN, the fence's read and record,
  // COMMIT) fewer a build: phase S, 30.2 → 26.1 statements a start (load/results/fleet.md,
  // 2026-11-29 03:28). Its events come out as before, just ahead of the first step's `new`.
  if (!req.builder.locks.length) {
    writes.fold(async (tx) => {
      const s = await newStep(tx, buildid, 'worker_preparation', { started: true });
      await endStep(tx, s.stepid, ready, Results.SUCCESS);
    });
    return { ready: true, locks: null };
  }
  // With locks, `acquiring locks` goes with the step's start: one fenced transaction fewer.
  const { stepid } = await transact(ctx, async (tx) => {
    const s = await newStep(tx, buildid, 'worker_preparation', { started: true });
    await setBuildStateString(tx, buildid, 'acquiring locks');
    return s;
  });
  // Waiting for a lock in the start gate would hold every other build's start behind it.
  leaveGate();
  const { signal, dispose } = interrupts.forStep();
  let locks: HeldLocks | null;
  try {
    locks = await deps.locks.acquire(req.builder.locks, worker.name, `build ${buildid}`, signal);
    if (!locks) {
      await transact(ctx, (tx) =>
        endStep(tx, stepid, 'cancelled while waiting for locks', interruptedResults(signal)),
      );
      return { ready: false, locks: null };
    }
  } finally {
    dispose();
  }
  await transact(ctx, async (tx) => {
    await endStep(tx, stepid, ready, Results.SUCCESS);
    await setBuildStateString(tx, buildid, 'building');
  });
  return { ready: true, locks };
}
