// A step's end in its own words, as Buildbot's steps that set descriptionDone when they end
// (RemoveDirectory's "Delete failed.", MasterShellCommand's "failed (1)"): those words with
// the step's descriptionSuffix, else its text, and the results unless SUCCESS.
import { stepSummary } from '../summary.js';
import type { StepContext, StepOutcome } from './step.js';

export function done(c: Pick<StepContext, 'text' | 'step'>, results: number, words?: string): StepOutcome {
  const suffix = c.step.descriptionSuffix;
  const text = words === undefined ? c.text : suffix ? `${words} ${suffix}` : words;
  return { results, summary: stepSummary(text, results) };
}
