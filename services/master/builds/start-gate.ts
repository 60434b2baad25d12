// The first writes of a build (its row, its properties) are let through a few builds at a
// time, in the order the builds came. Why: a master's transactions queue for its pool's
// connections first come first served, so when a claim pass hands out hundreds of builds at
// once (a master starting on a full queue, 333 idle workers each), every build's first
// transaction is served before any build's second: the first command reached a worker only
// once every build had written its row and its properties (fleet, 2026-11-28 20:01, 1,000
// workers and 25,000 pending: spawn to first command 29-38 s with the masters ready at 7.5-9 s).
// Through the gate, the first builds reach their workers after their own round trips, and the
// pool does the same work in all.
//
// A build keeps its place until its first command goes to its worker (run-build.ts, command.ts),
// not only until its row: let go at its row, the next builds' rows and the next claim passes'
// reads took the pool while the first builds' worker_preparation, step and log waited for it
// behind them, and a master's first command reached a worker 3.5-6 s after its first claim
// (fleet, 2026-11-29 00:41-01:40). It lets go earlier before anything that may wait long: a
// lock, a secret store, a step that is not a command at once (a trigger waits for builds that
// need the gate), and at its first step's end whatever that step did. Measured (fleet,
// 2026-11-29 01:45-02:15, `STOP_AFTER=A MASTER_LOG=DIR load/fleet/run.sh`, before and after in
// turn): a master's claiming part's start to its first command 0.80-1.88 s before (9 masters,
// load 7-10), 0.31-0.97 s after (load 8-20); phase S's wake to first command 1.09-2.14 s
// before, 0.47-0.88 s after, its builds started a second within the load's noise
// (load/results/fleet.md).
export class StartGate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    if (!(size >= 1)) throw new RangeError(`a start gate lets at least one build through, not ${size}`);
  }

  /** Waits for a place; resolves with its release, which may be called more than once. */
  async enter(): Promise<() => void> {
    if (this.active < this.size) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let left = false;
    return () => {
      if (left) return;
      left = true;
      // The place goes to the next in line as it is, or back to the gate.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    };
  }

  /** Builds between enter() and their release. */
  get inside(): number {
    return this.active;
  }
}
