// The single-branch scheduler: builds the changes of one branch.
//
// Buildbot facts (buildbot/schedulers/basic.py BaseBasicScheduler, SingleBranchScheduler):
// - without a tree-stable timer, each important change gets a build set of its own at once
//   and unimportant ones are forgotten (classifications left from before are flushed);
// - with one, each change passing the filter is classified (important or not) in
//   scheduler_changes; an important change (re)starts the timer, an unimportant one restarts
//   it only if it runs; when it fires, one build set for every classified change (the stamp
//   of the newest), then the classifications up to the newest are flushed;
// - on activation the classified changes are weighed again, which restarts the timer: a
//   master that takes the scheduler over builds what its previous owner had not;
// - reason "The SingleBranchScheduler scheduler named '<name>' triggered this build" (the
//   class name, then "scheduler").
// Beyond Buildbot: the changes that came while no master ran it are weighed on activation
// (watch.ts), and the build set and the flush are one transaction. A change that a build set
// of this scheduler's name already builds (a Buildbot master ran it before, and heard of the
// change) is not built again: neither given a build set nor classified, for a tree-stable
// scheduler, when the build set of a newer change of its branch already covers it.

import type { SchedulerConfig } from '../../core/config/master-config.js';
import type { ChangeFacts } from '../../core/data/index.js';
import {
  changeBuiltBy,
  classifyChanges,
  flushChangeClassifications,
  getChangeClassifications,
} from '../../core/data/index.js';
import { stateObjectId } from '../../core/data/object-state.js';
import { addBuildsetForChanges } from './buildset.js';
import { changeVerdict, type Verdict } from './filter.js';
import { Alarm, Scheduler, type SchedulerDeps } from './scheduler.js';
import type { ChangeWatch } from './watch.js';

type Config = Extract<SchedulerConfig, { type: 'single-branch' }>;

/** The class name its state object has, in Buildbot's objects table as in ours. */
export const STATE_CLASS = 'SingleBranchScheduler';

export class SingleBranchScheduler extends Scheduler<Config> {
  private readonly reason: string;
  private readonly verdict: (c: ChangeFacts) => Verdict;
  private readonly alarm: Alarm;
  /** Bumped whenever the timer is set or cancelled, so a firing that lost a race is dropped. */
  private generation = 0;

  constructor(config: Config, schedulerid: number, deps: SchedulerDeps) {
    super(config, schedulerid, deps);
    this.reason = `The SingleBranchScheduler scheduler named '${config.name}' triggered this build`;
    this.verdict = changeVerdict(config);
    this.alarm = new Alarm(deps.clock, deps.maxSleepMs);
  }

  protected async activate(catchUp: boolean): Promise<void> {
    const objectid = await this.read((tx) => stateObjectId(tx.q, this.name, STATE_CLASS));
    if (this.config.tree_stable_timer > 0) {
      const classified = await this.read((tx) => getChangeClassifications(tx, this.schedulerid));
      for (const important of classified.values()) if (important || this.alarm.armed) this.startTimer();
    } else {
      await this.owned((tx) => flushChangeClassifications(tx, this.schedulerid));
    }
    await this.watchChanges(objectid, catchUp);
  }

  protected async deactivate(): Promise<void> {
    this.alarm.cancel();
    this.generation++;
    await this.unwatchChanges();
  }

  protected override async weigh(c: ChangeFacts, watch: ChangeWatch): Promise<void> {
    const verdict = this.verdict(c);
    if (verdict === 'ignore') {
      watch.advance(c.changeid);
      return;
    }
    const important = verdict === 'important';
    const treeStable = this.config.tree_stable_timer > 0;
    if (!treeStable && !important) {
      watch.advance(c.changeid);
      return;
    }
    const taken = await this.owned(async (tx) => {
      const built = await changeBuiltBy(tx.q, this.name, c.changeid, treeStable);
      if (built) this.deps.log.info({ scheduler: this.name, changeid: c.changeid }, 'change already built');
      else if (treeStable) await classifyChanges(tx, this.schedulerid, new Map([[c.changeid, important]]));
      else await addBuildsetForChanges(tx, this.config, this.reason, [c.changeid], this.deps.log);
      await watch.save(tx, c.changeid);
      return !built;
    });
    if (treeStable && taken && (important || this.alarm.armed)) this.startTimer();
  }

  private startTimer(): void {
    const generation = ++this.generation;
    this.alarm.set(this.deps.clock() + this.config.tree_stable_timer, () => {
      void this.run('tree-stable timer', () => this.stable(generation));
    });
  }

  private async stable(generation: number): Promise<void> {
    if (!this.active || generation !== this.generation) return;
    await this.owned(async (tx) => {
      const classified = await getChangeClassifications(tx, this.schedulerid);
      if (classified.size === 0) return;
      const changeids = [...classified.keys()].sort((a, b) => a - b);
      await addBuildsetForChanges(tx, this.config, this.reason, changeids, this.deps.log);
      await flushChangeClassifications(tx, this.schedulerid, changeids.at(-1)! + 1);
    });
  }
}
