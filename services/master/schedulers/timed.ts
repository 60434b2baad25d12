// The timed schedulers: periodic and nightly.
//
// Buildbot facts (buildbot/schedulers/timed.py Timed, Periodic, Nightly):
// - the time of the last build set (`last_build`, seconds since the epoch) is kept in the
//   scheduler's object_state (class names Periodic, Nightly) and read on activation; the next
//   time is computed from it: Periodic, the last plus the period (none yet: now, so it builds
//   on start); Nightly, the cron's next time after the last (none yet: after now). A next time
//   already past builds at once, and becomes the last;
// - at that time: with only_if_changed, no build set if no important change was classified
//   since the last one, except the first time only_if_changed is on (`last_only_if_changed`
//   in object_state); with classified changes, one build set for them all (the stamp of the
//   newest) and their classifications flushed; without, a build set of each codebase's
//   configured stamp;
// - changes are watched (and classified, important or not) only with only_if_changed;
//   a Nightly's `branch` limits them (absent: any branch);
// - reasons "The Periodic scheduler named '<name>' triggered this build" and
//   "The Nightly scheduler named '<name>' triggered this build".
// Beyond Buildbot: the last-build time is read and written in the transaction that adds the
// build set, after checking ownership, so a scheduler changing hands builds each time once.

import type { SchedulerConfig } from '../../core/config/master-config.js';
import type { ChangeFacts } from '../../core/data/index.js';
import {
  classifyChanges,
  flushChangeClassifications,
  getChangeClassifications,
  type Tx,
} from '../../core/data/index.js';
import { getState, setState, stateObjectId } from '../../core/data/object-state.js';
import { addBuildsetForChanges, addBuildsetWithDefaults } from './buildset.js';
import { type CronSchedule, nextCronTime, parseCron } from './cron.js';
import { changeVerdict, type Verdict } from './filter.js';
import { Alarm, Scheduler, type SchedulerDeps } from './scheduler.js';
import type { ChangeWatch } from './watch.js';

type PeriodicConfig = Extract<SchedulerConfig, { type: 'periodic' }>;
type NightlyConfig = Extract<SchedulerConfig, { type: 'nightly' }>;

abstract class Timed<C extends PeriodicConfig | NightlyConfig> extends Scheduler<C> {
  protected abstract readonly className: string;
  protected abstract readonly reason: string;
  protected readonly onlyIfChanged: boolean = false;
  protected verdict: ((c: ChangeFacts) => Verdict) | null = null;
  private readonly alarm: Alarm;
  private generation = 0;
  private objectid = 0;
  private lastActuated: number | null = null;

  constructor(config: C, schedulerid: number, deps: SchedulerDeps) {
    super(config, schedulerid, deps);
    this.alarm = new Alarm(deps.clock, deps.maxSleepMs);
  }

  /** The next time to build after the last (null: never built), or null for never. */
  protected abstract nextBuildTime(last: number | null): number | null;

  protected async activate(catchUp: boolean): Promise<void> {
    this.objectid = await this.read((tx) => stateObjectId(tx.q, this.name, this.className));
    const last = await this.read((tx) => getState(tx.q, this.objectid, 'last_build'));
    this.lastActuated = typeof last === 'number' ? last : null;
    this.scheduleNext();
    if (!this.verdict) {
      await this.owned((tx) => flushChangeClassifications(tx, this.schedulerid));
      return;
    }
    await this.watchChanges(this.objectid, catchUp);
  }

  protected async deactivate(): Promise<void> {
    this.alarm.cancel();
    this.generation++;
    await this.unwatchChanges();
  }

  protected override async weigh(c: ChangeFacts, watch: ChangeWatch): Promise<void> {
    const verdict = this.verdict!(c);
    if (verdict === 'ignore') {
      watch.advance(c.changeid);
      return;
    }
    await this.owned(async (tx) => {
      await classifyChanges(tx, this.schedulerid, new Map([[c.changeid, verdict === 'important']]));
      await watch.save(tx, c.changeid);
    });
  }

  private scheduleNext(): void {
    const generation = ++this.generation;
    const next = this.nextBuildTime(this.lastActuated);
    if (next === null) {
      this.deps.log.warn({ scheduler: this.name }, 'the schedule names no time to build: never building');
      return;
    }
    const at = Math.max(next, this.deps.clock());
    this.alarm.set(at, () => {
      void this.run('timer', () => this.actuate(at, generation));
    });
  }

  private async actuate(at: number, generation: number): Promise<void> {
    if (!this.active || generation !== this.generation) return;
    this.lastActuated = at;
    try {
      await this.owned(async (tx) => {
        const last = await getState(tx.q, this.objectid, 'last_build');
        // Another master built this time already (it ran the scheduler until just now).
        if (typeof last === 'number' && last >= at) {
          this.lastActuated = last;
          return;
        }
        await setState(tx.q, this.objectid, 'last_build', at);
        await this.startBuild(tx);
      });
    } finally {
      if (this.active) this.scheduleNext();
    }
  }

  private async startBuild(tx: Tx): Promise<void> {
    const classified = await getChangeClassifications(tx, this.schedulerid);
    const lastOnlyIfChanged = (await getState(tx.q, this.objectid, 'last_only_if_changed')) === true;
    if (lastOnlyIfChanged && this.onlyIfChanged && ![...classified.values()].some(Boolean)) {
      this.deps.log.info({ scheduler: this.name }, 'no important changes: no build');
      return;
    }
    if (lastOnlyIfChanged !== this.onlyIfChanged)
      await setState(tx.q, this.objectid, 'last_only_if_changed', this.onlyIfChanged);
    const changeids = [...classified.keys()].sort((a, b) => a - b);
    if (changeids.length > 0) {
      await addBuildsetForChanges(tx, this.config, this.reason, changeids, this.deps.log);
      await flushChangeClassifications(tx, this.schedulerid, changeids.at(-1)! + 1);
    } else {
      await addBuildsetWithDefaults(tx, this.config, this.reason, this.deps.log);
    }
  }
}

export class PeriodicScheduler extends Timed<PeriodicConfig> {
  protected readonly className = 'Periodic';
  protected readonly reason = `The Periodic scheduler named '${this.config.name}' triggered this build`;

  protected nextBuildTime(last: number | null): number {
    return last === null ? this.deps.clock() : last + this.config.period;
  }
}

/** The class name of a nightly scheduler's state object, in Buildbot's objects table as in ours. */
export const NIGHTLY_CLASS = 'Nightly';

export class NightlyScheduler extends Timed<NightlyConfig> {
  protected readonly className = NIGHTLY_CLASS;
  protected readonly reason = `The Nightly scheduler named '${this.config.name}' triggered this build`;
  protected override readonly onlyIfChanged: boolean;
  private readonly cron: CronSchedule;

  constructor(config: NightlyConfig, schedulerid: number, deps: SchedulerDeps) {
    super(config, schedulerid, deps);
    this.cron = parseCron(config.cron);
    this.onlyIfChanged = config.only_if_changed;
    this.verdict = config.only_if_changed ? changeVerdict(config) : null;
  }

  protected nextBuildTime(last: number | null): number | null {
    return nextCronTime(this.cron, last ?? this.deps.clock());
  }
}
