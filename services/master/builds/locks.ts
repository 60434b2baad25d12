// Taking a builder's or step's locks for one build, and waiting for them: each attempt is one
// transaction of core/data/locks.ts (which says how the cluster agrees); between attempts a
// waiter sleeps until a release of one of its locks is announced on the event bus (from any
// master), or POLL_MS pass (a release whose announcement Redis lost, a dead master's locks
// freed by its expiry), or its signal aborts (the build was stopped or lost).
import type { LockAccessConfig, LockConfig } from '../../core/config/master-config.js';
import {
  type DataContext,
  type LockRequest,
  leaveLockQueue,
  releaseLocks,
  transact,
  tryAcquireLocks,
  type WaitingPlace,
} from '../../core/data/index.js';
import type { Subscribe } from '../../core/events/bus.js';

const POLL_MS = 2_000;

export interface HeldLocks {
  /** Let them go (once; later calls do nothing). */
  release(): Promise<void>;
}

const NOTHING: HeldLocks = { release: async () => {} };

/**
 * The lock a key says was released (`control/locks/<name>/released`), or null: the waiters'
 * key filter, apart so that a test checks it against the kinds masters hear
 * (core/events/master-kinds.ts).
 */
export function releasedLockOf(k: string): string | null {
  const [a, b, name, c, ...rest] = k.split('/');
  if (a !== 'control' || b !== 'locks' || c !== 'released' || name === undefined || rest.length) return null;
  return name;
}

export class Locks {
  private readonly byName: Map<string, LockConfig>;
  /** Waiters by lock name: each is woken when a release of that lock is heard. */
  private readonly wakers = new Map<string, Set<() => void>>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly ctx: DataContext,
    config: readonly LockConfig[],
    private readonly masterid: () => number,
    events: Subscribe,
    private readonly pollMs = POLL_MS,
  ) {
    this.byName = new Map(config.map((l) => [l.name, l]));
    this.unsubscribe = events((msg) => {
      const name = releasedLockOf(msg.k);
      if (name !== null) for (const wake of this.wakers.get(name) ?? []) wake();
    });
  }

  /** The instances of these accesses on this worker, as core/data/locks.ts takes them. */
  private requests(accesses: readonly LockAccessConfig[], worker: string): LockRequest[] {
    return accesses.map((a) => {
      // The configuration's references are checked: each access names a lock.
      const l = this.byName.get(a.lock)!;
      const perWorker = l.type === 'worker';
      return {
        lock: a.lock,
        worker: perWorker ? worker : '',
        mode: a.mode,
        count: a.count,
        maxCount: perWorker ? (l.maxCountForWorker[worker] ?? l.maxCount) : l.maxCount,
      };
    });
  }

  /**
   * Take all of `accesses` for a build on `worker`; null if `signal` aborts first (then
   * nothing is held and the place in the queue is given up).
   */
  async acquire(
    accesses: readonly LockAccessConfig[],
    worker: string,
    holder: string,
    signal: AbortSignal,
  ): Promise<HeldLocks | null> {
    if (accesses.length === 0) return NOTHING;
    const requests = this.requests(accesses, worker);
    const who = { masterid: this.masterid(), holder };
    let place: WaitingPlace | null = null;
    let heard = false;
    let wake: (() => void) | null = null;
    const waker = () => {
      heard = true;
      wake?.();
    };
    const names = [...new Set(requests.map((r) => r.lock))];
    for (const n of names) {
      const set = this.wakers.get(n) ?? new Set();
      this.wakers.set(n, set);
      set.add(waker);
    }
    try {
      for (;;) {
        if (signal.aborted) return null;
        heard = false;
        const got = await transact(this.ctx, (tx) => tryAcquireLocks(tx, requests, who, place));
        if ('held' in got) {
          place = null;
          return this.holding(got.held);
        }
        place = got.waiting;
        // A release heard while the attempt ran is not waited for again.
        if (heard) continue;
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            signal.removeEventListener('abort', done);
            wake = null;
            resolve();
          };
          const timer = setTimeout(done, this.pollMs);
          signal.addEventListener('abort', done, { once: true });
          wake = done;
        });
      }
    } finally {
      for (const n of names) this.wakers.get(n)?.delete(waker);
      // Stopped, or an attempt failed: a place left in the queue would hold up everyone behind it.
      const left = place as WaitingPlace | null;
      if (left) await transact(this.ctx, (tx) => leaveLockQueue(tx, left)).catch(() => {});
    }
  }

  private holding(ids: number[]): HeldLocks {
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        await transact(this.ctx, (tx) => releaseLocks(tx, ids));
      },
    };
  }

  /**
   * A reloaded configuration's locks (master/reconfigure.ts). A lock's limits are the cluster's,
   * one at a time: the new ones apply to every acquisition from now on, running builds' too. A
   * lock the new configuration no longer names stays known, for the running builds that use it.
   */
  reconfigure(config: readonly LockConfig[]): void {
    for (const l of config) this.byName.set(l.name, l);
  }

  close(): void {
    this.unsubscribe();
  }
}
