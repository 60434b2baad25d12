// A trigger step (Buildbot's Trigger): add a build set through each named triggerable
// scheduler, on the source stamps and with the properties trigger-stamps.ts makes, and this
// build as parent. With waitForFinish, wait for them all to complete and take the worst of
// their results, summarizing how many of their builds ended how.
//
// The wait hears each build set's `complete` event; a look at the database every
// SAFETY_POLL_MS covers an event that never came (Redis away when it was published).

import type { StepConfig } from '../../../core/config/master-config.js';
import { type BuildsetsOutcome, buildsetsOutcome, transact } from '../../../core/data/index.js';
import { RESULT_NAMES, Results } from '../../../core/results.js';
import { addBuildsetForSourceStamps } from '../../schedulers/buildset.js';
import { interruptedResults } from '../interruption.js';
import { stepSummary } from '../summary.js';
import type { StepContext, StepKind } from './step.js';
import { triggerProperties, triggerStamps } from './trigger-stamps.js';

type TriggerStep = Extract<StepConfig, { type: 'trigger' }>;

const SAFETY_POLL_MS = 5_000;

const base = (step: TriggerStep) => `triggered ${step.schedulers.join(', ')}`;

export const trigger: StepKind<TriggerStep> = {
  defaultName: 'trigger',
  describe: (step) => base(step),
  async run(c, signal) {
    const { step } = c;
    // Listening before the build sets exist: none can complete unheard.
    const completions = new Completions(c);
    try {
      const bsids = await addBuildsets(c);
      if (!step.waitForFinish) return { results: Results.SUCCESS, summary: base(step) };
      completions.watch(bsids);
      const outcome = await completions.wait(bsids, signal);
      if (!outcome)
        return { results: interruptedResults(signal), summary: stepSummary(base(step), Results.CANCELLED) };
      const detail = [...outcome.builds.entries()]
        .sort(([a], [b]) => a - b)
        .map(([res, n]) => `${n} ${RESULT_NAMES[res]}`);
      const summary = detail.length ? `${base(step)}, ${detail.join(', ')}` : base(step);
      return { results: outcome.results, summary, buildSummary: summary };
    } finally {
      completions.close();
    }
  },
};

async function addBuildsets(c: StepContext<TriggerStep>): Promise<number[]> {
  const { step, deps } = c;
  const properties = triggerProperties(c);
  const bsids: number[] = [];
  for (const name of step.schedulers) {
    // The configuration's references are checked: each name is a triggerable scheduler.
    const sched = deps.config.schedulers.find((s) => s.name === name && s.type === 'triggerable')!;
    const added = await transact(deps.ctx, async (tx) =>
      addBuildsetForSourceStamps(
        tx,
        sched,
        `The Triggerable scheduler named '${name}' triggered this build`,
        triggerStamps(c, sched),
        deps.log,
        {
          properties,
          waited_for: step.waitForFinish,
          parent_buildid: c.build.buildid,
          parent_relationship: 'Triggered from',
        },
      ),
    );
    bsids.push(added.bsid);
  }
  return bsids;
}

/**
 * The key a trigger step waits for, for each build set it triggered: the only one it acts on
 * (a test checks masters hear it: core/events/master-kinds.ts).
 */
export const completionKey = (bsid: number): string => `buildsets/${bsid}/complete`;

/** Hears build sets complete, and waits until all of a group have. */
class Completions {
  private keys = new Set<string>();
  private heard = false;
  private wake: (() => void) | null = null;
  private readonly unsubscribe: () => void;

  constructor(private readonly c: StepContext<TriggerStep>) {
    this.unsubscribe = c.deps.events((msg) => {
      if (!this.keys.has(msg.k)) return;
      this.heard = true;
      this.wake?.();
    });
  }

  watch(bsids: readonly number[]): void {
    this.keys = new Set(bsids.map(completionKey));
  }

  /** Their outcome once all are complete; null if the signal aborts first. */
  async wait(bsids: readonly number[], signal: AbortSignal): Promise<BuildsetsOutcome | null> {
    for (;;) {
      this.heard = false;
      const outcome = await buildsetsOutcome(this.c.deps.ctx.db, bsids);
      if (outcome.complete) return outcome;
      if (signal.aborted) return null;
      // An event heard while the database was being read is not waited for again.
      if (!this.heard) await this.next(signal);
    }
  }

  private next(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, this.c.deps.triggerPollMs ?? SAFETY_POLL_MS);
      signal.addEventListener('abort', done, { once: true });
      this.wake = done;
    });
  }

  close(): void {
    this.unsubscribe();
  }
}
