// Failed worker logins, counted per worker name and address together and per address, over
// a window: past a limit, that pair (or address) is refused before any password is checked,
// until the window ends. A worker elsewhere is never locked out by someone guessing its
// password: only the guesser's own address is. Counted in each master's memory (workers
// reach one master at a time; guessing across masters gains at most one limit per master).
// (docs/security.md; test/worker/credentials.test.ts)

export interface WorkerThrottleSettings {
  maxFailuresPerWorkerAndAddress: number;
  maxFailuresPerAddress: number;
  windowMs: number;
}

export const DEFAULT_WORKER_THROTTLE: WorkerThrottleSettings = {
  maxFailuresPerWorkerAndAddress: 10,
  maxFailuresPerAddress: 30,
  windowMs: 15 * 60_000,
};

interface Window {
  count: number;
  endsAt: number;
}

// Enough for a flood of addresses without holding memory for ever: the oldest go first.
const MAX_KEYS = 100_000;

export class WorkerLoginThrottle {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly s: WorkerThrottleSettings = DEFAULT_WORKER_THROTTLE,
    private readonly now: () => number = Date.now,
  ) {}

  private keys(name: string, address: string): [string, number][] {
    return [
      [`a:${address}`, this.s.maxFailuresPerAddress],
      [`w:${address}\n${name}`, this.s.maxFailuresPerWorkerAndAddress],
    ];
  }

  private current(key: string): Window | undefined {
    const w = this.windows.get(key);
    if (w && w.endsAt <= this.now()) {
      this.windows.delete(key);
      return undefined;
    }
    return w;
  }

  /** Whether a login of this worker from this address may be tried now. */
  allowed(name: string, address: string): boolean {
    return this.keys(name, address).every(([key, max]) => (this.current(key)?.count ?? 0) < max);
  }

  failed(name: string, address: string): void {
    for (const [key] of this.keys(name, address)) {
      const w = this.current(key);
      if (w) w.count++;
      else {
        if (this.windows.size >= MAX_KEYS) this.windows.delete(this.windows.keys().next().value as string);
        this.windows.set(key, { count: 1, endsAt: this.now() + this.s.windowMs });
      }
    }
  }

  /** A good login: that worker's failures from that address are forgiven. */
  succeeded(name: string, address: string): void {
    this.windows.delete(`w:${address}\n${name}`);
  }
}
