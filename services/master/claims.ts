// The claims a master holds on the requests its builds run. A claim carries the time it was
// last renewed; expire-masters releases claims nobody renewed for a long while (their master
// died without being expired), so every held claim is renewed every RENEW_MS, one request at
// a time: a build that just finished must not cost the others their renewal.
//
// This is also where a claim found lost (renewal answers false: another master took the
// request) will interrupt its build, once claims are fenced.
import { type DataContext, reclaimBuildRequests, transact } from '../core/data/index.js';
import type { Logger } from '../core/telemetry/logger.js';

export const RENEW_MS = 60_000;

export interface ClaimsDeps {
  ctx: DataContext;
  masterid: () => number;
  log: Logger;
  /** How often held claims are renewed (default RENEW_MS). */
  renewMs?: number;
}

export class Claims {
  private readonly held = new Set<number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: ClaimsDeps) {}

  start(): void {
    this.timer = setInterval(() => void this.renew(), this.deps.renewMs ?? RENEW_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Keep renewing this request's claim until the returned release is called. */
  hold(brid: number): () => void {
    this.held.add(brid);
    return () => {
      this.held.delete(brid);
    };
  }

  get count(): number {
    return this.held.size;
  }

  /** One renewal of every held claim (also what the timer runs). */
  async renew(): Promise<void> {
    for (const brid of [...this.held]) {
      try {
        // False when the request completed meanwhile, or (unfenced, for now) went elsewhere.
        await transact(this.deps.ctx, (tx) => reclaimBuildRequests(tx, [brid], this.deps.masterid()));
      } catch (err) {
        this.deps.log.warn({ brid, err: (err as Error).message }, 'reclaiming a build request failed');
      }
    }
  }
}
