// What a running build is doing now: its first unfinished step, as Buildbot's UI shows it
// in place of the build's own state ("starting" for its whole run until it finishes).
// One small read per running build (limit 1, four fields), never the build's whole list.
import { getPage } from '../api.js';
import type { Build, Step } from '../types.js';

type Running = Pick<Build, 'buildid' | 'complete'>;

export async function currentStep(buildid: number, signal: AbortSignal): Promise<Step | null> {
  const page = await getPage<Step>(
    `builds/${buildid}/steps`,
    'steps',
    {
      complete: false,
      order: 'number',
      limit: 1,
      field: ['name', 'state_string', 'number', 'started_at', 'complete'],
    },
    signal,
  );
  return page.items[0] ?? null;
}

/** The current step of each running build in `builds`, by buildid (finished ones absent). */
export async function currentSteps(
  builds: readonly Running[],
  signal: AbortSignal,
): Promise<Map<number, Step>> {
  const out = new Map<number, Step>();
  await Promise.all(
    builds
      .filter((b) => !b.complete)
      .map((b) =>
        currentStep(b.buildid, signal)
          .then((s) => {
            if (s) out.set(b.buildid, s);
          })
          .catch(() => {
            // the build's own state is shown instead
          }),
      ),
  );
  return out;
}

/** A build's status as read: the current step while it runs, else its own state. */
export function statusOf(
  build: Pick<Build, 'complete' | 'state_string'>,
  step: Step | null | undefined,
): string {
  return !build.complete && step ? `${step.name}: ${step.state_string}` : build.state_string;
}
