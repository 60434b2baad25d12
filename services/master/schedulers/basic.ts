// What the single-branch and any-branch schedulers share (Buildbot's BaseBasicScheduler,
// buildbot/schedulers/basic.py):
// - without a tree-stable timer, each important change gets a build set of its own at once
//   and unimportant ones are forgotten (classifications left from before are flushed);
// - with one, each change passing the filter is classified (important or not) in
//   scheduler_changes; an important change (re)starts its timer, an unimportant one restarts
//   it only if it runs; when it fires, one build set for every classified change of that
//   timer (the stamp of the newest), then those classifications are flushed;
// - each change has a timer by name: one for a single-branch scheduler, one per (codebase,
//   project, repository, branch) for an any-branch one;
// - on activation the classified changes are weighed again, which restarts their timers: a
//   master that takes the scheduler over builds what its previous owner had not;
// - reason "The <class> scheduler named '<name>' triggered this build".
// Beyond Buildbot: the changes that came while no master ran it are weighed on activation
// (watch.ts), and the build set and the flush are one transaction. A change that a build set
// of this scheduler's name already builds (a Buildbot master ran it before, and heard of the
// change) is not built again: neither given a build set nor classified, for a tree-stable
// scheduler, when the build set of a newer change of its branch already covers it. Buildbot
// flushes, when a timer fires, every classification below the newest change built, those of
// other branches too (whose timers then find nothing to build); here only the fired timer's.

import type { SchedulerConfig } from '../../core/config/master-config.js';
import type { ChangeFacts, ClassificationFilter } from '../../core/data/index.js';
import {
  changeBuiltBy,
  classifyChanges,
  flushChangeClassifications,
  getChangeClassifications,
  getChangeFacts,
} from '../../core/data/index.js';
import { stateObjectId } from '../../core/data/object-state.js';
import { addBuildsetForChanges } from './buildset.js';
import { changeVerdict, type Verdict } from './filter.js';
import { Alarm, Scheduler, type SchedulerDeps } from './scheduler.js';
import type { ChangeWatch } from './watch.js';

type Config = Extract<SchedulerConfig, { type: 'single-branch' | 'any-branch' }>;

interface Timer {
  alarm: Alarm;
  /** Bumped whenever the timer is set or cancelled, so a firing that lost a race is dropped. */
  generation: number;
  /** Which classified changes are this timer's. */
  filter: ClassificationFilter;
}

export abstract class BasicScheduler<C extends Config> extends Scheduler<C> {
  /** The class name of its state object, in Buildbot's objects table as in ours. */
  protected abstract readonly stateClass: string;
  private readonly verdict: (c: ChangeFacts) => Verdict;
  private readonly timers = new Map<string, Timer>();

  constructor(config: C, schedulerid: number, deps: SchedulerDeps) {
    super(config, schedulerid, deps);
    this.verdict = changeVerdict(config);
  }

  /** The name of a change's timer, and which classified changes that timer builds. */
  protected abstract timerOf(c: ChangeFacts): { key: string; filter: ClassificationFilter };

  private get reason(): string {
    return `The ${this.stateClass} scheduler named '${this.name}' triggered this build`;
  }

  protected async activate(catchUp: boolean): Promise<void> {
    const objectid = await this.read((tx) => stateObjectId(tx.q, this.name, this.stateClass));
    if (this.config.tree_stable_timer > 0) {
      const classified = await this.read(async (tx) => {
        const out: [ChangeFacts, boolean][] = [];
        for (const [changeid, important] of await getChangeClassifications(tx, this.schedulerid)) {
          const c = await getChangeFacts(tx.q, changeid);
          if (c) out.push([c, important]);
        }
        return out;
      });
      for (const [c, important] of classified) this.restartIf(c, important);
    } else {
      await this.owned((tx) => flushChangeClassifications(tx, this.schedulerid));
    }
    await this.watchChanges(objectid, catchUp);
  }

  protected async deactivate(): Promise<void> {
    for (const t of this.timers.values()) t.alarm.cancel();
    this.timers.clear();
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
    if (treeStable && taken) this.restartIf(c, important);
  }

  /** An important change (re)starts its timer; an unimportant one only one that runs. */
  private restartIf(c: ChangeFacts, important: boolean): void {
    const { key, filter } = this.timerOf(c);
    let t = this.timers.get(key);
    if (!important && !t?.alarm.armed) return;
    if (!t) {
      t = { alarm: new Alarm(this.deps.clock, this.deps.maxSleepMs), generation: 0, filter };
      this.timers.set(key, t);
    }
    const timer = t;
    const generation = ++timer.generation;
    timer.alarm.set(this.deps.clock() + this.config.tree_stable_timer, () => {
      void this.run('tree-stable timer', () => this.stable(key, timer, generation));
    });
  }

  private async stable(key: string, timer: Timer, generation: number): Promise<void> {
    if (!this.active || this.timers.get(key) !== timer || generation !== timer.generation) return;
    this.timers.delete(key);
    await this.owned(async (tx) => {
      const classified = await getChangeClassifications(tx, this.schedulerid, timer.filter);
      if (classified.size === 0) return;
      const changeids = [...classified.keys()].sort((a, b) => a - b);
      await addBuildsetForChanges(tx, this.config, this.reason, changeids, this.deps.log);
      await flushChangeClassifications(tx, this.schedulerid, changeids.at(-1)! + 1, timer.filter);
    });
  }
}
