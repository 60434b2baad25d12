// Closing the BullMQ workers and queues a master opened (its jobs', its reporters'), in a
// bounded time whether Redis is there or not.
//
// A worker's close lets its running jobs finish: it interrupts the blocking fetch and waits for
// that connection's 'end'. ioredis never emits 'end' for a client waiting to reconnect (no
// socket to close), so with Redis away, or a connection not yet back after a Redis restart,
// the close never returned (BullMQ #4656): a master stopped during a Redis outage would wait
// out its shutdown bound (core/lifecycle.ts) and exit without its later stop steps (marking
// itself stopped among them), and a CI run timed out in
// test/master/jobs/expire-masters.test.ts ("after Redis forgot everything") stopping jobs
// whose Redis had just restarted. Such a worker is closed without waiting: its jobs cannot
// report to Redis anyway, and one that was running is run again once its lock lapses.
import { settledWithin, withinDeadline } from '../../core/lifecycle/within.js';
import type { Logger } from '../../core/telemetry/logger.js';

interface Connection {
  readonly status: string;
  disconnect(): void;
}

/**
 * What closeQueues needs of a BullMQ Queue or Worker: its connections (a Worker's blocking
 * fetch has its own, which its waitUntilReady returns), and its close (a Worker's, forced, does
 * not wait for its running jobs).
 */
export interface Closable {
  readonly name: string;
  readonly client: Promise<Connection>;
  waitUntilReady(): Promise<Connection>;
  close(force?: boolean): Promise<void>;
}

export interface CloseBounds {
  /** How long each may take to finish opening its connections before it is closed. */
  settleMs: number;
  /** How long a worker's running jobs, or a queue's close, may take before its connections are cut. */
  closeMs: number;
}

export const CLOSE_BOUNDS: CloseBounds = {
  // BullMQ closes a connection that is still opening with ioredis's disconnect, which fails the
  // opening commands it sent without awaiting them (CLIENT SETNAME, INFO) as unhandled
  // rejections ("Connection is closed"), as a master stopped right after it started did in
  // test/master/reporters.
  settleMs: 2000,
  // Within the master's shutdown margin (service.ts, 30 s after the drain), which the stores'
  // closes and the last events share. A job still running past it is run again elsewhere.
  closeMs: 15_000,
};

/**
 * Close workers (each after its running jobs, unless Redis is away), then queues. Redis being
 * away costs a stop at most `settleMs`; Redis going away during the close, at most `closeMs`
 * more, after which the connections left are cut.
 */
export async function closeQueues(
  workers: readonly Closable[],
  queues: readonly Closable[],
  log: Logger,
  bounds: CloseBounds = CLOSE_BOUNDS,
): Promise<void> {
  const close = async (c: Closable, what: string) => {
    const conns = await withinDeadline(Promise.all([c.client, c.waitUntilReady()]), bounds.settleMs, () =>
      Error('not ready'),
    ).catch(() => []);
    const up = conns.length > 0 && conns.every((x) => x.status === 'ready');
    if (await settledWithin(c.close(!up), bounds.closeMs)) return;
    log.warn({ [what]: c.name, closeMs: bounds.closeMs }, `${what} not closed in time: its connections cut`);
    for (const x of new Set(conns)) x.disconnect();
  };
  await Promise.allSettled(workers.map((w) => close(w, 'worker')));
  await Promise.allSettled(queues.map((q) => close(q, 'queue')));
}
