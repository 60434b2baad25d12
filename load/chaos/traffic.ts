// GET load on the APIs while a fault happens: RATE requests a second to each API, at a
// fixed pace whatever the answers take (an open model: a slow server does not slow the
// load down), over the reads a Buildbot UI makes while builds run. An API that refuses the
// connection is skipped for the next one, as an ingress skips a pod that is gone; what
// counts is what an API that answered said: every 5xx is counted, with when it came. A 503
// that carries Retry-After is the honest answer while PostgreSQL is away (the client is told
// to come back), so it is counted apart from the other 5xx, which are failures.
const PATHS = [
  '/builds?order=-buildid&limit=20',
  '/builds?complete=false',
  '/buildrequests?complete=false',
  '/builders',
  '/builders/1/builds?order=-number&limit=10',
  '/masters',
  '/workers',
  '/buildsets?order=-bsid&limit=10',
  '/changes?limit=10',
  '/buildrequests?order=-buildrequestid&limit=10',
];

const TIMEOUT_MS = 10_000;

export interface TrafficCounts {
  sent: number;
  ok: number;
  /** Answers 4xx (none is expected: every path exists). */
  client: number;
  /** 5xx but a 503 with Retry-After. */
  server: number;
  /** 503 with Retry-After. */
  unavailable: number;
  /** No API took the connection, or none answered within the timeout. */
  unserved: number;
  /** When each 5xx came (ms since the epoch) and its status. */
  serverErrors: { at: number; status: number; path: string }[];
}

export class Traffic {
  readonly counts: TrafficCounts = {
    sent: 0,
    ok: 0,
    client: 0,
    server: 0,
    unavailable: 0,
    unserved: 0,
    serverErrors: [],
  };
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private n = 0;

  /** `bases`: the APIs' /api/v2 URLs, asked again each tick (a restarted API keeps its port). */
  constructor(
    private readonly bases: () => string[],
    private readonly ratePerApi: number,
  ) {}

  start(): void {
    if (this.ratePerApi <= 0) return;
    const apis = this.bases().length;
    const every = 1000 / (this.ratePerApi * apis);
    let due = performance.now();
    const tick = () => {
      const now = performance.now();
      // Catch up on the requests that were due while the event loop was busy.
      while (due <= now) {
        this.fire();
        due += every;
      }
      this.timer = setTimeout(tick, Math.max(1, due - performance.now()));
    };
    tick();
  }

  private fire(): void {
    const bases = this.bases();
    const first = this.n++ % bases.length;
    const path = PATHS[this.n % PATHS.length]!;
    this.counts.sent++;
    const p = this.ask(bases, first, path).finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  private async ask(bases: string[], first: number, path: string): Promise<void> {
    for (let i = 0; i < bases.length; i++) {
      const base = bases[(first + i) % bases.length]!;
      let res: Response;
      try {
        res = await fetch(base + path, {
          headers: { accept: 'application/json' },
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
      } catch (err) {
        // Refused (the pod is gone): the next API. Timed out: the answer never came.
        if ((err as Error).name === 'TimeoutError') break;
        continue;
      }
      await res.arrayBuffer().catch(() => undefined);
      if (res.status < 400) this.counts.ok++;
      else if (res.status < 500) this.counts.client++;
      else if (res.status === 503 && res.headers.get('retry-after')) this.counts.unavailable++;
      else {
        this.counts.server++;
        this.counts.serverErrors.push({ at: Date.now(), status: res.status, path });
      }
      return;
    }
    this.counts.unserved++;
  }

  async stop(): Promise<TrafficCounts> {
    clearTimeout(this.timer);
    await Promise.allSettled([...this.inFlight]);
    return this.counts;
  }
}
