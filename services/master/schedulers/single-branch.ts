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
// - reason "The SingleBranchScheduler named '<name>' triggered this build".
// Beyond Buildbot: the changes that came while no master ran it are weighed on activation
// (watch.ts), and the build set and the flush are one transaction.

import type { SchedulerConfig } from '../../core/config/master-config.js';
import type { ChangeFacts } from '../../core/data/index.js';
import {
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

export class SingleBranchScheduler extends Scheduler<Config> {
  private readonly reason: string;
  private readonly verdict: (c: ChangeFacts) => Verdict;
  private readonly alarm: Alarm;
  /** Bumped whenever the timer is set or cancelled, so a firing that lost a race is dropped. */
  private generation = 0;

  constructor(config: Config, schedulerid: number, deps: SchedulerDeps) {
    super(config, schedulerid, deps);
    this.reason = `The SingleBranchScheduler named '${config.name}' triggered this build`;
    this.verdict = changeVerdict(config);
    this.alarm = new Alarm(deps.clock, deps.maxSleepMs);
  }

  protected async activate(catchUp: boolean): Promise<void> {
    const objectid = await this.read((tx) => stateObjectId(tx.q, this.name, 'SingleBranchScheduler'));
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
    if (this.config.tree_stable_timer === 0) {
      if (!important) watch.advance(c.changeid);
      else
        await this.owned(async (tx) => {
          await addBuildsetForChanges(tx, this.config, this.reason, [c.changeid]);
          await watch.save(tx, c.changeid);
        });
      return;
    }
    await this.owned(async (tx) => {
      await classifyChanges(tx, this.schedulerid, new Map([[c.changeid, important]]));
      await watch.save(tx, c.changeid);
    });
    if (important || this.alarm.armed) this.startTimer();
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
      await addBuildsetForChanges(tx, this.config, this.reason, changeids);
      await flushChangeClassifications(tx, this.schedulerid, changeids.at(-1)! + 1);
    });
  }
}
