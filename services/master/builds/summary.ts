// How a build's results and state strings come together, as Buildbot 3.7 makes them
// (process/results.py computeResultAndTermination, process/build.py stepDone and
// allStepsDone, process/buildstep.py getResultSummary, util command_to_string).
import { RESULT_NAMES, Results, worst } from '../../core/results.js';

export interface ResultConfig {
  haltOnFailure: boolean;
  flunkOnFailure: boolean;
  warnOnFailure: boolean;
  flunkOnWarnings?: boolean;
  warnOnWarnings?: boolean;
}

/** The build's results after a step, and whether the build stops here. */
export function combine(
  step: ResultConfig,
  stepResult: number,
  buildSoFar: number,
): { results: number; terminate: boolean } {
  let overall = stepResult;
  let terminate = false;
  if (stepResult === Results.FAILURE) {
    if (!step.flunkOnFailure) overall = Results.SUCCESS;
    if (step.warnOnFailure) overall = Results.WARNINGS;
    if (step.flunkOnFailure) overall = Results.FAILURE;
    if (step.haltOnFailure) terminate = true;
  } else if (stepResult === Results.WARNINGS) {
    overall = step.warnOnWarnings ? Results.WARNINGS : Results.SUCCESS;
    if (step.flunkOnWarnings) overall = Results.FAILURE;
  } else if (
    stepResult === Results.EXCEPTION ||
    stepResult === Results.RETRY ||
    stepResult === Results.CANCELLED
  ) {
    terminate = true;
  }
  return { results: worst(buildSoFar, overall), terminate };
}

/** Which step results put the step's summary into the build's state string. */
export function entersBuildSummary(step: ResultConfig, stepResult: number): boolean {
  const policy: number[] = [Results.EXCEPTION, Results.RETRY, Results.CANCELLED];
  if (step.flunkOnFailure || step.haltOnFailure || step.warnOnFailure) policy.push(Results.FAILURE);
  if (step.warnOnWarnings || step.flunkOnWarnings) policy.push(Results.WARNINGS);
  return policy.includes(stepResult);
}

/** Buildbot's command_to_string: the first two words, quoted, with `...` if there were more. */
export function commandSummary(command: string | readonly string[]): string | null {
  const words = typeof command === 'string' ? command.split(/\s+/).filter(Boolean) : [...command];
  if (words.length === 0) return null;
  return words.length < 3 ? `'${words.join(' ')}'` : `'${words.slice(0, 2).join(' ')} ...'`;
}

/** A finished step's summary: its text, with its results unless it succeeded. */
export function stepSummary(text: string | null, results: number): string {
  const base = text ?? 'finished';
  return results === Results.SUCCESS ? base : `${base} (${RESULT_NAMES[results]})`;
}

/** The build's final state string. */
export function buildStateString(
  results: number,
  stoppedReason: string | null,
  summaries: readonly string[],
): string {
  const head: Record<number, string> = {
    [Results.FAILURE]: 'failed',
    [Results.WARNINGS]: 'warnings',
    [Results.EXCEPTION]: 'exception',
    [Results.RETRY]: 'retry',
    [Results.CANCELLED]: 'cancelled',
  };
  const text = [head[results] ?? 'build successful'];
  if (stoppedReason !== null) text.push(`(${stoppedReason})`);
  return [...text, ...summaries].join(' ');
}
