// Each scheduler kind of the configuration, with what runs it and the class name of the state
// object where it keeps its record of changes seen (if it watches changes). A mapped type
// over the configuration's kinds: a kind the schema knows but this map lacks does not compile.
import type { SchedulerConfig } from '../../core/config/master-config.js';
import { ANY_BRANCH_CLASS, AnyBranchScheduler } from './any-branch.js';
import { DependentScheduler } from './dependent.js';
import { AnnouncedScheduler, type Scheduler, type SchedulerDeps } from './scheduler.js';
import { SingleBranchScheduler, STATE_CLASS } from './single-branch.js';
import { NIGHTLY_CLASS, NightlyScheduler, PeriodicScheduler } from './timed.js';
import { TryJobdirScheduler } from './try-jobdir.js';

type Kind<T extends SchedulerConfig['type']> = {
  create: (s: Extract<SchedulerConfig, { type: T }>, id: number, deps: SchedulerDeps) => Scheduler;
  watchedStateClass: (s: Extract<SchedulerConfig, { type: T }>) => string | undefined;
};

const kinds: { [T in SchedulerConfig['type']]: Kind<T> } = {
  'single-branch': {
    create: (s, id, deps) => new SingleBranchScheduler(s, id, deps),
    watchedStateClass: () => STATE_CLASS,
  },
  'any-branch': {
    create: (s, id, deps) => new AnyBranchScheduler(s, id, deps),
    watchedStateClass: () => ANY_BRANCH_CLASS,
  },
  periodic: {
    create: (s, id, deps) => new PeriodicScheduler(s, id, deps),
    watchedStateClass: () => undefined,
  },
  nightly: {
    create: (s, id, deps) => new NightlyScheduler(s, id, deps),
    watchedStateClass: (s) => (s.only_if_changed ? NIGHTLY_CLASS : undefined),
  },
  triggerable: {
    create: (s, id, deps) => new AnnouncedScheduler(s, id, deps),
    watchedStateClass: () => undefined,
  },
  // Its users log in on the PB port (workers/pb/try-userpass.ts), on every master; the
  // scheduler itself only holds its name and enabled flag, as a triggerable's.
  try_userpass: {
    create: (s, id, deps) => new AnnouncedScheduler(s, id, deps),
    watchedStateClass: () => undefined,
  },
  try_jobdir: {
    create: (s, id, deps) => new TryJobdirScheduler(s, id, deps),
    watchedStateClass: () => undefined,
  },
  dependent: {
    create: (s, id, deps) => new DependentScheduler(s, id, deps),
    watchedStateClass: () => undefined,
  },
};

const kindOf = <T extends SchedulerConfig['type']>(s: Extract<SchedulerConfig, { type: T }>) =>
  kinds[s.type as T] as Kind<T>;

export function createScheduler(s: SchedulerConfig, id: number, deps: SchedulerDeps): Scheduler {
  return kindOf(s).create(s, id, deps);
}

/** The class name of the state object a scheduler keeps its record of changes seen in, if it watches changes. */
export function watchedStateClass(s: SchedulerConfig): string | undefined {
  return kindOf(s).watchedStateClass(s);
}
