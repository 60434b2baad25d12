// Which schedulers and change sources run on this master: every round it asks for each one
// configured (trySetSchedulerMaster, trySetChangeSourceMaster), starts the schedulers it now
// owns and stops those it lost. An item whose master expired is released by expireMasters
// (or by that master's masterStopped) and goes to whichever master asks first on its next
// round, so each runs on exactly one live master.
//
// Buildbot facts (buildbot/util/service.py ClusteredBuildbotService): each service polls for
// ownership (every five minutes) and activates when it gets it; a master that stops
// deactivates its services and releases them. Force schedulers are schedulers there too:
// they are owned and shown on a master like the rest (their forms are served by the API).
// Change sources are owned and shown; a git one polls its repository on the master that owns
// it (changesources/git-poller.ts), the others only mark that changes come through the API
// pods' change hooks.
// A change-watching scheduler that another master runs has its record of changes seen kept
// current by this one (watch.ts): that master may be a Buildbot one, which never hears of
// the changes posted to our hooks, and whoever takes the scheduler next catches up on them.
import { tmpdir } from 'node:os';
import { ConfigError } from '../../core/config/errors.js';
import type { MasterConfig } from '../../core/config/master-config.js';
import {
  type DataContext,
  findChangeSourceId,
  findSchedulerId,
  touchChangesSeen,
  transact,
  trySetChangeSourceMaster,
  trySetSchedulerMaster,
} from '../../core/data/index.js';
import { stateObjectId } from '../../core/data/object-state.js';
import { type BusMessage, EVENTS_LOST_KEY, type Subscribe } from '../../core/events/bus.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { GitPoller } from '../changesources/git-poller.js';
import { CronError, parseCron } from './cron.js';
import { createScheduler, watchedStateClass } from './kinds.js';
import { AnnouncedScheduler, type Scheduler, type SchedulerDeps } from './scheduler.js';
import { REFRESH_SECONDS, SEEN_KEY } from './watch.js';

/** Registers a handler for every message of the event bus; returns what removes it. */

// Buildbot asks for ownership every five minutes; five seconds hands a dead master's
// schedulers over sooner after its expiry, for one cheap query per item.
const ROUND_MS = 5_000;
const MAX_SLEEP_MS = 60_000;

export interface SchedulerManagerOptions {
  ctx: DataContext;
  config: MasterConfig;
  /** This master's id (known once it has registered). */
  masterid: () => number;
  log: Logger;
  subscribe: Subscribe;
  /** How often to ask for ownership, in ms (default 5,000). */
  roundMs?: number;
  /** How stale a scheduler's record of consumed changes may be to catch up from it
   *  (default twice master_expiry_seconds). */
  catchUpSeconds?: number;
  /** Seconds since the epoch (default the real time); for tests. */
  clock?: () => number;
  /** The longest a timer sleeps before it looks at the clock again (default 60,000 ms). */
  maxSleepMs?: number;
  /** Where change sources keep scratch files (git mirrors); default the system's temp folder. */
  workdir?: string;
  /** The environment change sources run their commands in (git's), handed down from main. */
  env: Readonly<Record<string, string | undefined>>;
}

/** The problems of the scheduler configuration the schema cannot see (cron expressions). */
export function schedulerConfigProblems(config: MasterConfig): string[] {
  const problems: string[] = [];
  config.schedulers.forEach((s, i) => {
    if (s.type !== 'nightly') return;
    try {
      parseCron(s.cron);
    } catch (err) {
      if (!(err instanceof CronError)) throw err;
      problems.push(`schedulers[${i}].cron: ${err.message}`);
    }
  });
  return problems;
}

/** What runs while this master owns an item: a scheduler, or a change source that polls. */
type Owned = Pick<Scheduler, 'start' | 'stop'> &
  Partial<Pick<Scheduler, 'tick' | 'onChange' | 'setEnabled' | 'onBuildset'>>;

interface Item {
  kind: 'scheduler' | 'changesource';
  name: string;
  id: number;
  make: () => Owned | null;
  /** Its configuration as JSON: a reload that changes it restarts what runs for it. */
  settings: string;
  /** A scheduler that watches changes: the state object of its record of changes seen. */
  watchObjectId?: number;
}

export class SchedulerManager {
  private readonly deps: SchedulerDeps;
  private items: Item[] = [];
  /** Owned items by id within their kind, with what runs for them (null: nothing to run). */
  private readonly owned = new Map<string, Owned | null>();
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | null = null;
  private unsubscribe: (() => void) | null = null;
  private stopped = false;
  /** When this master last kept each watching scheduler's record current for its owner. */
  private readonly touched = new Map<string, number>();

  constructor(private readonly opts: SchedulerManagerOptions) {
    const problems = schedulerConfigProblems(opts.config);
    if (problems.length) throw new ConfigError('CONFIG_SCHEMA', 'the schedulers are invalid', problems);
    this.deps = {
      ctx: opts.ctx,
      masterid: opts.masterid,
      log: opts.log,
      clock: opts.clock ?? (() => Date.now() / 1000),
      maxSleepMs: opts.maxSleepMs ?? MAX_SLEEP_MS,
      catchUpSeconds: opts.catchUpSeconds ?? 2 * opts.config.master_expiry_seconds,
    };
  }

  /** Find (or create) the ids, listen to the event bus, take what is free, then keep asking. */
  async start(): Promise<void> {
    this.items = await this.itemsOf(this.opts.config);
    this.unsubscribe = this.opts.subscribe((msg) => this.dispatch(msg));
    await this.runRound();
    this.timer = setInterval(() => void this.runRound(), this.opts.roundMs ?? ROUND_MS);
    this.timer.unref();
  }

  /**
   * Run a reloaded configuration's schedulers and change sources (master/reconfigure.ts). One
   * whose settings are unchanged runs on untouched. One that changed is stopped here and made
   * anew by the next round from the new settings: this master keeps it (its row stays ours),
   * so no other master runs it in between. One that is gone is stopped and given back: a
   * master still on the old configuration takes it during a rollout, and none after.
   */
  async reconfigure(config: MasterConfig): Promise<void> {
    const next = await this.itemsOf(config);
    // After the ids are known, nothing awaited until the swap: a round sees old or new, whole.
    while (this.round) await this.round;
    if (this.stopped) return;
    const settings = new Map(next.map((i) => [key(i), i.settings]));
    const ended = this.items.filter((i) => settings.get(key(i)) !== i.settings && this.owned.has(key(i)));
    const running = ended.map((i) => this.owned.get(key(i)));
    for (const i of ended) this.owned.delete(key(i));
    this.items = next;
    await Promise.all(running.map((r) => r?.stop()));
    const gone = ended.filter((i) => !settings.has(key(i)));
    await this.release(gone);
    await this.runRound();
  }

  private itemsOf(config: MasterConfig): Promise<Item[]> {
    return transact(this.opts.ctx, async (tx) => {
      const items: Item[] = [];
      for (const s of config.schedulers) {
        const id = await findSchedulerId(tx, s.name);
        const item: Item = {
          kind: 'scheduler',
          name: s.name,
          id,
          make: () => createScheduler(s, id, this.deps),
          settings: JSON.stringify(s),
        };
        const stateClass = watchedStateClass(s);
        if (stateClass) item.watchObjectId = await stateObjectId(tx.q, s.name, stateClass);
        items.push(item);
      }
      for (const f of config.force_schedulers) {
        const id = await findSchedulerId(tx, f.name);
        const make = () => new AnnouncedScheduler({ type: 'force', name: f.name }, id, this.deps);
        items.push({ kind: 'scheduler', name: f.name, id, make, settings: JSON.stringify(f) });
      }
      for (const c of config.change_sources) {
        const id = await findChangeSourceId(tx, c.name);
        const repourl = c.type === 'pb' ? undefined : c.repourl;
        const deps = {
          ctx: this.opts.ctx,
          log: this.opts.log,
          workdir: this.opts.workdir ?? tmpdir(),
          env: this.opts.env,
        };
        // A PB change source is owned and shown here; every master's PB port takes its changes
        // (../workers/pb/change-source.ts).
        const make = () => (c.type === 'git' && repourl ? new GitPoller({ ...c, repourl }, deps) : null);
        items.push({ kind: 'changesource', name: c.name, id, make, settings: JSON.stringify(c) });
      }
      return items;
    });
  }

  /**
   * Stop every scheduler (waiting for what each is doing) and, unless `release` is false,
   * give back what this master owns so another master takes it on its next round.
   */
  async stop({ release = true }: { release?: boolean } = {}): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.unsubscribe?.();
    this.unsubscribe = null;
    await this.round;
    const owned = this.items.filter((item) => this.owned.has(key(item)));
    await Promise.all(owned.map((item) => this.owned.get(key(item))?.stop()));
    this.owned.clear();
    if (release) await this.release(owned);
  }

  /** Give these back, each only if still ours: another master takes it on its next round. */
  private async release(items: Item[]): Promise<void> {
    const masterid = this.opts.masterid();
    for (const item of items) {
      const set = item.kind === 'scheduler' ? trySetSchedulerMaster : trySetChangeSourceMaster;
      // Release only what is still ours: it may have gone to another master meanwhile.
      await transact(this.opts.ctx, async (tx) => {
        if (await set(tx, item.id, masterid)) await set(tx, item.id, null);
      }).catch((err: Error) =>
        this.opts.log.warn({ [item.kind]: item.name, err: err.message }, 'could not release'),
      );
    }
  }

  /** Names of what this master runs now. */
  ownedNames(): { schedulers: string[]; changeSources: string[] } {
    const names = (kind: Item['kind']) =>
      this.items.filter((i) => i.kind === kind && this.owned.has(key(i))).map((i) => i.name);
    return { schedulers: names('scheduler'), changeSources: names('changesource') };
  }

  /** One ownership round now (also what the timer runs); rounds never overlap. */
  runRound(): Promise<void> {
    this.round ??= this.ask().finally(() => {
      this.round = null;
    });
    return this.round;
  }

  private async ask(): Promise<void> {
    const masterid = this.opts.masterid();
    for (const item of this.items) {
      if (this.stopped) return;
      const set = item.kind === 'scheduler' ? trySetSchedulerMaster : trySetChangeSourceMaster;
      let mine: boolean;
      try {
        mine = await transact(this.opts.ctx, (tx) => set(tx, item.id, masterid));
      } catch (err) {
        this.opts.log.warn({ [item.kind]: item.name, err: (err as Error).message }, 'ownership round failed');
        continue;
      }
      if (this.stopped) return;
      const k = key(item);
      const running = this.owned.has(k);
      if (mine && !running) {
        const s = item.make();
        this.owned.set(k, s);
        this.opts.log.info({ [item.kind]: item.name, masterid }, `${item.kind} now runs on this master`);
        await s?.start();
      } else if (!mine && running) {
        const s = this.owned.get(k);
        this.owned.delete(k);
        this.opts.log.info({ [item.kind]: item.name }, `${item.kind} went to another master`);
        await s?.stop();
      } else if (mine) {
        this.owned.get(k)?.tick?.();
      }
      if (!mine) await this.touch(item);
    }
  }

  /** Keep the record of changes seen current for the master that runs the scheduler now. */
  private async touch(item: Item): Promise<void> {
    const objectid = item.watchObjectId;
    if (objectid === undefined) return;
    const k = key(item);
    const now = this.deps.clock();
    if (now - (this.touched.get(k) ?? Number.NEGATIVE_INFINITY) < REFRESH_SECONDS) return;
    try {
      await transact(this.opts.ctx, (tx) => touchChangesSeen(tx.q, item.id, objectid, SEEN_KEY, now));
      this.touched.set(k, now);
    } catch (err) {
      this.opts.log.warn(
        { scheduler: item.name, err: (err as Error).message },
        'could not keep the changes record',
      );
    }
  }

  // The body (`msg.m`) is read only for the keys that use it: the bus parses it when asked
  // (events/bus.ts' HeardMessage).
  private dispatch(msg: BusMessage): void {
    const e = schedulerEventOf(msg.k);
    // Lost events may have announced changes: the schedulers that watch changes read the
    // table from where they are now, as an ownership round has them do.
    if (e?.kind === 'lost') for (const s of this.owned.values()) s?.tick?.();
    else if (e?.kind === 'change') for (const s of this.owned.values()) s?.onChange?.(e.id);
    else if (e?.kind === 'buildset') {
      const scheduler = (msg.m as { scheduler?: unknown } | null)?.scheduler;
      for (const s of this.owned.values()) s?.onBuildset?.(e.id, e.event, scheduler);
    } else if (e?.kind === 'scheduler') {
      const enabled = (msg.m as { enabled?: unknown } | null)?.enabled;
      const s = this.owned.get(`scheduler:${e.id}`);
      if (s && typeof enabled === 'boolean') s.setEnabled?.(enabled);
    }
  }
}

/** An event the schedulers act on. */
export type SchedulerBusEvent =
  | { kind: 'lost' }
  | { kind: 'change'; id: number }
  | { kind: 'buildset'; id: number; event: 'new' | 'complete' }
  | { kind: 'scheduler'; id: number };

/**
 * The manager's key filter, apart so that a test checks it against the kinds masters hear
 * (core/events/master-kinds.ts); null for a key no scheduler acts on.
 */
export function schedulerEventOf(k: string): SchedulerBusEvent | null {
  if (k === EVENTS_LOST_KEY) return { kind: 'lost' };
  const parts = k.split('/');
  if (parts.length !== 3) return null;
  const id = Number(parts[1]);
  if (!Number.isSafeInteger(id)) return null;
  if (parts[0] === 'changes' && parts[2] === 'new') return { kind: 'change', id };
  if (parts[0] === 'buildsets' && (parts[2] === 'new' || parts[2] === 'complete'))
    return { kind: 'buildset', id, event: parts[2] };
  if (parts[0] === 'schedulers' && parts[2] === 'updated') return { kind: 'scheduler', id };
  return null;
}

const key = (item: Item) => `${item.kind}:${item.id}`;
