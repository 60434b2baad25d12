// The dependent scheduler (Buildbot's schedulers.Dependent, buildbot/schedulers/dependent.py):
// - while it runs, each new build set of its upstream scheduler (the `scheduler` its `new`
//   event carries) is recorded as a subscription;
// - when a subscribed build set completes with SUCCESS or WARNINGS, one build set for its
//   own builders on that build set's source stamps, reason `downstream`; whatever the
//   result, the subscription is dropped (and so is one whose build set no longer exists);
// - on activation it looks at every subscription, so a build set that completed while no
//   master ran it (a restart, a hand-over) is acted on then, as on every ownership round.
// The subscriptions are where Buildbot 3.7 keeps them, the `upstream_bsids` list in the
// object_state of its (name, 'Dependent') object: a database adopted from Buildbot (or a
// Buildbot master beside ours) keeps them. Beyond Buildbot: the build sets it adds and the
// subscriptions it drops are one transaction, so a crash between them builds nothing twice.
import type { SchedulerConfig } from '../../core/config/master-config.js';
import { buildsetOutcome, type Tx } from '../../core/data/index.js';
import { getState, setState, stateObjectId } from '../../core/data/object-state.js';
import { Results } from '../../core/results.js';
import { addBuildsetForSourceStamps } from './buildset.js';
import { Scheduler } from './scheduler.js';

/** The class name of its state object, in Buildbot's objects table as in ours. */
export const DEPENDENT_CLASS = 'Dependent';
export const SUBSCRIPTIONS_KEY = 'upstream_bsids';

export class DependentScheduler extends Scheduler<Extract<SchedulerConfig, { type: 'dependent' }>> {
  private objectid: number | null = null;

  protected async activate(): Promise<void> {
    this.objectid = await this.read((tx) => stateObjectId(tx.q, this.name, DEPENDENT_CLASS));
    await this.checkCompleted();
  }

  protected async deactivate(): Promise<void> {}

  /**
   * Each ownership round (and after lost events): a completion no event announced (lost, or
   * a Buildbot master's) is acted on within a round.
   */
  override tick(): void {
    if (this.active) void this.run('poll', () => this.checkCompleted());
  }

  override onBuildset(bsid: number, event: 'new' | 'complete', scheduler: unknown): void {
    if (event === 'new' && scheduler !== this.config.upstream) return;
    void this.run(`upstream build set ${event}`, async () => {
      const objectid = this.objectid;
      if (!this.active || objectid === null) return;
      if (event === 'complete') return this.checkCompleted();
      await this.owned(async (tx) => {
        const bsids = await subscriptions(tx, objectid);
        if (!bsids.includes(bsid)) await setState(tx.q, objectid, SUBSCRIPTIONS_KEY, [...bsids, bsid]);
      });
    });
  }

  /** Act on every subscribed build set that has completed, and drop those subscriptions. */
  private async checkCompleted(): Promise<void> {
    const objectid = this.objectid;
    if (objectid === null) return;
    await this.owned(async (tx) => {
      const bsids = await subscriptions(tx, objectid);
      const done = new Set<number>();
      for (const bsid of bsids) {
        const o = await buildsetOutcome(tx.q, bsid);
        if (o && !o.complete) continue;
        if (o && (o.results === Results.SUCCESS || o.results === Results.WARNINGS))
          await addBuildsetForSourceStamps(tx, this.config, 'downstream', o.ssids, this.deps.log);
        done.add(bsid);
      }
      if (done.size)
        await setState(
          tx.q,
          objectid,
          SUBSCRIPTIONS_KEY,
          bsids.filter((id) => !done.has(id)),
        );
    });
  }
}

/** The subscribed build set ids (a value that is not a list of ids counts as none). */
async function subscriptions(tx: Tx, objectid: number): Promise<number[]> {
  const v = await getState(tx.q, objectid, SUBSCRIPTIONS_KEY);
  return Array.isArray(v) ? v.filter((id): id is number => Number.isSafeInteger(id)) : [];
}
