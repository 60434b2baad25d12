// What every scheduler a master runs shares: it runs only while this master owns it, does
// one thing at a time (activation, a change, a timer, a stop: Buildbot serializes these
// with DeferredLocks), and writes nothing unless it still owns itself in the same
// transaction, so that a master that lost a scheduler (expired while alive, say) can never
// add a build set beside the new owner.
import type { SchedulerConfig } from '../../core/config/master-config.js';
import {
  type ChangeFacts,
  changeFactsAfter,
  type DataContext,
  getChangeFacts,
  schedulerEnabled,
  type Tx,
  transact,
  trySetSchedulerMaster,
} from '../../core/data/index.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { ChangeWatch } from './watch.js';

const CATCH_UP_BATCH = 500;

export interface SchedulerDeps {
  ctx: DataContext;
  masterid: () => number;
  log: Logger;
  /** Seconds since the epoch (fractions allowed); tests move it. */
  clock: () => number;
  /** The longest a timer sleeps before it looks at the clock again. */
  maxSleepMs: number;
  /** How old a scheduler's record of the changes it consumed may be for it to catch up. */
  catchUpSeconds: number;
}

/** This master no longer owns the scheduler: whatever it was about to write is dropped. */
export class LostOwnership extends Error {
  override name = 'LostOwnership';
}

/** One task at a time, in the order given. */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/** A timer for a moment on the clock, which rechecks the clock at least every maxSleepMs. */
export class Alarm {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly clock: () => number,
    private readonly maxSleepMs: number,
  ) {}

  get armed(): boolean {
    return this.timer !== undefined;
  }

  set(at: number, ring: () => void): void {
    this.cancel();
    const wait = () => {
      const ms = (at - this.clock()) * 1000;
      if (ms <= 0) {
        this.timer = undefined;
        ring();
        return;
      }
      this.timer = setTimeout(wait, Math.min(ms, this.maxSleepMs));
      this.timer.unref();
    };
    wait();
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

export type AnySchedulerConfig = SchedulerConfig | { type: 'force'; name: string };

export abstract class Scheduler<C extends AnySchedulerConfig = AnySchedulerConfig> {
  /** Running: owned, enabled and activated. */
  protected active = false;
  private readonly queue = new SerialQueue();
  /** Where a scheduler that watches changes is in their stream (watch.ts); null if it does not. */
  private watch: ChangeWatch | null = null;

  constructor(
    readonly config: C,
    readonly schedulerid: number,
    protected readonly deps: SchedulerDeps,
  ) {}

  get name(): string {
    return this.config.name;
  }

  /** This master now owns it: run, catching up on what came while nobody did. */
  start(): Promise<void> {
    return this.run('start', async () => {
      if (this.active) return;
      if (!(await schedulerEnabled(this.deps.ctx.db, this.schedulerid))) return;
      this.active = true;
      await this.activate(true);
    });
  }

  /** Stop running; resolves once whatever it was doing is done. */
  stop(): Promise<void> {
    return this.run('stop', async () => {
      if (!this.active) return;
      this.active = false;
      await this.deactivate();
    });
  }

  /** schedulers/<id>/updated: enabled or disabled while owned (no catching up on enabling). */
  setEnabled(enabled: boolean): void {
    void this.run('enable', async () => {
      if (enabled === this.active) return;
      this.active = enabled;
      if (enabled) await this.activate(false);
      else await this.deactivate();
    });
  }

  /** A new change (changes/<id>/new). */
  onChange(changeid: number): void {
    // Queued behind an activation under way, which is when the watch begins.
    void this.run('change', async () => {
      const watch = this.watch;
      if (!this.active || !watch?.fresh(changeid)) return;
      const c = await this.read((tx) => getChangeFacts(tx.q, changeid));
      if (c) await this.weigh(c, watch);
    });
  }

  /**
   * Called on each ownership round while owned: weighs the changes no event announced (a
   * Buildbot master's), and keeps the record of changes seen fresh.
   */
  tick(): void {
    const watch = this.watch;
    if (!this.active || !watch) return;
    void this.run('poll', async () => {
      if (!this.active || this.watch !== watch) return;
      await this.weighAfter(watch, watch.pollFrom());
      if (watch.due) await this.owned((tx) => watch.save(tx));
    });
  }

  /**
   * A build set was added (`new`, with the name of the scheduler that added it) or completed
   * (buildsets/<id>/new, buildsets/<id>/complete); only the dependent scheduler listens.
   */
  onBuildset(_bsid: number, _event: 'new' | 'complete', _scheduler: unknown): void {}

  /** Weigh one change that came (for the schedulers that watch changes). */
  protected async weigh(_c: ChangeFacts, _watch: ChangeWatch): Promise<void> {}

  /** Start watching changes: from the record (catchUp) or from now, weighing those that came. */
  protected async watchChanges(objectid: number, catchUp: boolean): Promise<void> {
    const watch = new ChangeWatch(objectid, this.deps);
    this.watch = watch;
    await this.owned((tx) => watch.begin(tx, catchUp));
    await this.weighAfter(watch, watch.position);
  }

  /** Weigh, in id order, the changes after `from` that this watch has not weighed yet. */
  private async weighAfter(watch: ChangeWatch, from: number): Promise<void> {
    for (let after = from; ; ) {
      const batch = await this.read((tx) => changeFactsAfter(tx.q, after, CATCH_UP_BATCH));
      if (batch.length === 0) return;
      for (const c of batch) {
        after = c.changeid;
        watch.advance(c.changeid);
        if (watch.fresh(c.changeid)) await this.weigh(c, watch);
      }
    }
  }

  /** Stop watching, recording how far it got (if it still owns the scheduler). */
  protected async unwatchChanges(): Promise<void> {
    const watch = this.watch;
    this.watch = null;
    if (watch) await this.owned((tx) => watch.save(tx)).catch(() => undefined);
  }

  protected abstract activate(catchUp: boolean): Promise<void>;
  protected abstract deactivate(): Promise<void>;

  /** Queue a task; its failure is logged, never thrown. */
  protected run(what: string, task: () => Promise<void>): Promise<void> {
    return this.queue.run(task).catch((err: Error) => {
      if (err instanceof LostOwnership)
        this.deps.log.info({ scheduler: this.name }, `${what}: no longer this master's scheduler`);
      else this.deps.log.warn({ scheduler: this.name, err: err.message }, `scheduler ${what} failed`);
    });
  }

  /** A transaction that first makes sure this master still owns the scheduler. */
  protected owned<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return transact(this.deps.ctx, async (tx) => {
      if (!(await trySetSchedulerMaster(tx, this.schedulerid, this.deps.masterid())))
        throw new LostOwnership();
      return fn(tx);
    });
  }

  /** A transaction that only reads. */
  protected read<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return transact(this.deps.ctx, fn);
  }
}

/** Owned and shown on a master, nothing more: triggerable (the trigger step builds) and force schedulers. */
export class AnnouncedScheduler extends Scheduler {
  protected async activate(): Promise<void> {}
  protected async deactivate(): Promise<void> {}
}
