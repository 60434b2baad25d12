// One step of a build, around whatever its kind does: the step's row, its locks (held until
// its kind is done; a stop while waiting for them cancels it with the reason in its
// `cancelled while waiting for locks` log, as Buildbot's), its templates rendered
// (a template that cannot be rendered, such as an unknown secret, ends the step EXCEPTION
// with the reason in its `err.text` log, as Buildbot's addLogWithFailure), doStepIf (a step
// that should not run ends SKIPPED at once), its URLs and state strings (secrets redacted:
// a step's text is made from its templates already redacted, so that a summary that keeps
// the command's first words cannot cut a secret into words that no longer match it), its
// span, its end and whether it is hidden.
import { trace } from '@opentelemetry/api';
import type { Renderable, StepConfig } from '../../core/config/master-config.js';
import {
  addLog,
  addStepURL,
  appendLog,
  endStep,
  finishLog,
  newStep,
  setStepStateString,
  type Tx,
} from '../../core/data/index.js';
import { InterpolationError } from '../../core/interpolate.js';
import { RESULT_NAMES, Results } from '../../core/results.js';
import { reasonText } from '../workers/connection.js';
import { holds } from './conditions.js';
import { render } from './interpolate.js';
import { interruptedResults } from './interruption.js';
import { logText } from './line-splitter.js';
import { StepWrites } from './step-writes.js';
import { stepKind } from './steps/index.js';
import type { StepContext, StepOutcome } from './steps/step.js';
import { stepSummary } from './summary.js';

const tracer = trace.getTracer('flotilla-master');

export function stepName(step: StepConfig): string {
  const kind = stepKind(step);
  return step.name ?? kind.nameOf?.(step) ?? kind.defaultName;
}

export type StepRun = Omit<StepContext, 'stepid' | 'text' | 'render' | 'writes'>;

/** Run one step in its span; the signal interrupts it (interruption.ts says with what). */
export function runStep(s: StepRun, signal: AbortSignal): Promise<StepOutcome> {
  return tracer.startActiveSpan(`step ${stepName(s.step)}`, async (span) => {
    try {
      const o = await recordStep(s, signal);
      span.setAttribute('flotilla.results', RESULT_NAMES[o.results] ?? String(o.results));
      return o;
    } finally {
      span.end();
    }
  });
}

/** A step's text: its description, or what its kind says it does, with its suffix. */
function describe(s: StepRun, r: (x: Renderable) => string): string | null {
  const text = s.step.descriptionDone ?? s.step.description ?? stepKind(s.step).describe(s.step, r);
  return text !== null && s.step.descriptionSuffix ? `${text} ${s.step.descriptionSuffix}` : text;
}

async function recordStep(s: StepRun, signal: AbortSignal): Promise<StepOutcome> {
  const { ctx } = s.deps;
  const { step, props, build } = s;
  const label = (t: string) => build.redactor.cleanLabel(t);
  const r = (x: Renderable) =>
    render(x, {
      props,
      sourcestamps: build.sourcestamps,
      worker: { ...build.worker.info },
      secrets: s.deps.secrets,
      redactor: build.redactor,
    });
  // The step's row and its start in one fenced transaction: each transaction of a build adds
  // BEGIN, its fence's read and record and COMMIT to its own statements (claims.ts), about
  // half of a short build's statements (load/results/fleet.md, 2026-11-28 22:30). The build's
  // first step carries its worker_preparation (run-build.ts' prepare).
  const { stepid } = await build.writes.transact((tx) =>
    newStep(tx, build.buildid, stepName(step), { started: true }),
  );
  const writes = new StepWrites(ctx);
  const end = async (results: number, summary: string): Promise<StepOutcome> => {
    const shown = label(summary);
    await writes.transact((tx) =>
      endStep(tx, stepid, shown, results, holds(step.hideStepIf, props, results)),
    );
    return { results, summary: shown };
  };
  // Buildbot takes a step's locks before it renders anything or decides whether to run.
  // Waiting for one in the start gate would hold other builds' starts behind it.
  if (step.locks.length) build.leaveStartGate();
  const held = await s.deps.locks.acquire(step.locks, build.worker.name, `step ${stepid}`, signal);
  if (!held) {
    await addTextLog(s, stepid, writes, 'cancelled while waiting for locks', reasonText(signal.reason));
    return end(
      interruptedResults(signal),
      stepSummary(step.descriptionDone ?? step.description ?? null, interruptedResults(signal)),
    );
  }
  try {
    return await runHolding({ ...s, stepid, writes }, signal, r, end);
  } catch (err) {
    // Writes still folded (logs to finish) commit on their own when the step ends without its
    // end's transaction; the step's own error is what its build reports.
    await writes.flush().catch(() => undefined);
    throw err;
  } finally {
    await held.release();
  }
}

type Holding = StepRun & Pick<StepContext, 'stepid' | 'writes'>;

async function runHolding(
  s: Holding,
  signal: AbortSignal,
  r: (x: Renderable) => string,
  end: (results: number, summary: string) => Promise<StepOutcome>,
): Promise<StepOutcome> {
  const { step, props, build, stepid, writes } = s;
  const { redactor } = build;
  let text: string | null;
  try {
    text = describe(s, (x) => redactor.cleanLabel(r(x)));
  } catch (err) {
    if (!(err instanceof InterpolationError)) throw err;
    return failedToRender(s, err, end);
  }
  if (!holds(step.doStepIf, props)) return end(Results.SKIPPED, stepSummary(text, Results.SKIPPED));
  try {
    const urls = step.urls.map((u) => ({
      name: redactor.cleanLabel(r(u.name)),
      url: redactor.clean(r(u.url)),
    }));
    const running = async (tx: Tx) => {
      await setStepStateString(tx, stepid, redactor.cleanLabel(step.description ?? text ?? 'running'));
      for (const u of urls) await addStepURL(tx, stepid, u.name, u.url);
    };
    // A kind whose first write is its command's log: the state string rides in that log's
    // transaction (step-writes.ts); any other kind may wait long before its first write.
    const kind = stepKind(step);
    if (kind.logFirst) writes.fold(running);
    else await writes.transact(running);
    // A kind that runs runCommand at once keeps the start gate to its command (command.ts);
    // any other may wait long (a trigger for builds that need the gate) and lets go here.
    if (!kind.logFirst) build.leaveStartGate();
    const outcome = await kind.run({ ...s, text, render: r }, signal);
    const done = await end(outcome.results, outcome.summary);
    return {
      ...outcome,
      summary: done.summary,
      ...(outcome.buildSummary ? { buildSummary: redactor.cleanLabel(outcome.buildSummary) } : {}),
    };
  } catch (err) {
    if (!(err instanceof InterpolationError)) throw err;
    return failedToRender(s, err, end);
  }
}

async function failedToRender(
  s: Holding,
  err: InterpolationError,
  end: (results: number, summary: string) => Promise<StepOutcome>,
): Promise<StepOutcome> {
  await addTextLog(s, s.stepid, s.writes, 'err.text', err.message);
  return end(
    Results.EXCEPTION,
    stepSummary(s.step.descriptionDone ?? s.step.description ?? null, Results.EXCEPTION),
  );
}

/** A finished text log of one message (secrets redacted). */
async function addTextLog(
  s: StepRun,
  stepid: number,
  writes: StepWrites,
  name: string,
  message: string,
): Promise<void> {
  const lines = logText(s.build.redactor.clean(message));
  await writes.transact(async (tx) => {
    const logid = await addLog(tx, stepid, name, 't');
    await appendLog(tx, logid, lines);
    await finishLog(tx, logid);
  });
}
