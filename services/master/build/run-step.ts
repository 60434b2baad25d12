// One step of a build, around whatever its kind does: the step's row, doStepIf (a step that
// should not run ends SKIPPED at once), its URLs and state strings, its span, its end and
// whether it is hidden.
import { trace } from '@opentelemetry/api';
import type { StepConfig } from '../../core/config/master-config.js';
import {
  addStepURL,
  finishStep,
  newStep,
  setStepStateString,
  startStep,
  transact,
} from '../../core/data/index.js';
import { RESULT_NAMES, Results } from '../../core/results.js';
import { interpolate, type Properties } from './interpolate.js';
import { stepKind } from './steps/index.js';
import type { StepContext, StepOutcome } from './steps/step.js';
import { stepSummary } from './summary.js';

const tracer = trace.getTracer('flotilla-master');

export function stepName(step: StepConfig): string {
  return step.name ?? stepKind(step).defaultName;
}

function shouldRun(step: StepConfig, props: Properties): boolean {
  const c = step.doStepIf;
  if (c === undefined || c === true) return true;
  if (c === false) return false;
  const v = props[c.property]?.[0];
  return c.equals === undefined ? Boolean(v) : JSON.stringify(v) === JSON.stringify(c.equals);
}

function hidden(step: StepConfig, results: number): boolean {
  const h = step.hideStepIf;
  if (h === undefined || typeof h === 'boolean') return h === true;
  return h.results.includes(results);
}

export type StepRun = Omit<StepContext, 'stepid' | 'text'>;

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

async function recordStep(s: StepRun, signal: AbortSignal): Promise<StepOutcome> {
  const { ctx } = s.deps;
  const { step, props } = s;
  const kind = stepKind(step);
  const { stepid } = await transact(ctx, (tx) => newStep(tx, s.build.buildid, stepName(step)));
  const text = step.descriptionDone ?? step.description ?? kind.describe(step, props);
  if (!shouldRun(step, props)) {
    const summary = stepSummary(text, Results.SKIPPED);
    await transact(ctx, async (tx) => {
      await startStep(tx, stepid);
      await setStepStateString(tx, stepid, summary);
      await finishStep(tx, stepid, Results.SKIPPED, hidden(step, Results.SKIPPED));
    });
    return { results: Results.SKIPPED, summary };
  }
  await transact(ctx, async (tx) => {
    await startStep(tx, stepid);
    await setStepStateString(tx, stepid, step.description ?? text ?? 'running');
    for (const u of step.urls)
      await addStepURL(tx, stepid, interpolate(u.name, props), interpolate(u.url, props));
  });
  const outcome = await kind.run({ ...s, stepid, text }, signal);
  await transact(ctx, async (tx) => {
    await setStepStateString(tx, stepid, outcome.summary);
    await finishStep(tx, stepid, outcome.results, hidden(step, outcome.results));
  });
  return outcome;
}
