// A composition root as a list of named parts, each with a start and a stop: started in order,
// stopped in reverse, on a failed start too (issue 29 §3). The master used to start everything
// in one long function and, when a start failed half way, stopped only some of what it had
// started: its heartbeat and job workers kept running in a process that had reported failure.
//
//   const parts = new Parts({ log });
//   const membership = await parts.start({ name: 'membership', start: ..., stop: (m) => m.stop() });
//   const jobs = await parts.start({ name: 'jobs', start: () => startJobs(...membership...), ... });
//   const later = parts.startBehind({ name: 'jobs', ... });  // starts while the next parts start
//   parts.complete();                                          // waits for those started behind
//
// A part is given what the parts before it returned (the composition root's own variables),
// never what a later one will: one that must hear an earlier part registers with it when it
// starts and leaves when it stops. A start that throws leaves nothing of its own behind (it
// cleans up after itself, as startJobs does); what the parts before it started is stopped here.
import type { ShutdownStep } from '../lifecycle.js';
import type { Logger } from '../telemetry/logger.js';

export interface Part<H> {
  /** Names it in logs, in a failed start's error and in the shutdown steps. */
  readonly name: string;
  start(): Promise<H> | H;
  /** Absent: the part holds nothing that needs stopping (it registers, it opens nothing). */
  stop?(handle: H): Promise<unknown> | unknown;
}

/** A part's start failed; `cause` is what it threw. Everything started before it is stopped. */
export class PartStartError extends Error {
  override name = 'PartStartError';
  constructor(
    readonly part: string,
    cause: unknown,
  ) {
    super(`${part} did not start: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

export interface PartsOptions {
  log: Logger;
  /**
   * Tests only: the part of this name fails right after its start returned, so that its own
   * stop runs too. A name no part has fails complete(), so a test cannot pass on a typo.
   */
  failAt?: string | undefined;
}

interface Started {
  name: string;
  stop: () => Promise<void>;
}

export class Parts {
  private readonly started: Started[] = [];
  /** The starts of parts started behind (startBehind), each a PartStartError if it failed. */
  private readonly behind: Promise<unknown>[] = [];
  private stopping: Promise<void> | null = null;

  constructor(private readonly opts: PartsOptions) {}

  /** Start `part` after those started so far; its handle, or a PartStartError once the others are stopped. */
  async start<H>(part: Part<H>): Promise<H> {
    if (this.stopping) throw new PartStartError(part.name, new Error('the parts are stopping'));
    try {
      const handle = await this.timed(part);
      let stopped: Promise<void> | null = null;
      this.started.push({
        name: part.name,
        // Once, whoever asks first: a shutdown step and stop() may both ask.
        stop: () => (stopped ??= Promise.resolve().then(async () => void (await part.stop?.(handle)))),
      });
      if (this.opts.failAt === part.name) throw new Error(`failAt: ${part.name} (a test's injected failure)`);
      return handle;
    } catch (err) {
      // Each stop's error is logged there; the start's error is the one the caller needs.
      await this.stop().catch(() => {});
      throw new PartStartError(part.name, err);
    }
  }

  /**
   * Start `part` behind the ones after it: its place in the stop order is taken now, its start
   * runs while the next parts start, and complete() waits for it. Its handle when it has one;
   * a PartStartError if it fails, which complete() throws too, once every part is stopped. A
   * stop waits for its start to end, then stops it if it started.
   */
  startBehind<H>(part: Part<H>): Promise<H> {
    if (this.stopping)
      return Promise.reject(new PartStartError(part.name, new Error('the parts are stopping')));
    let handle: { h: H } | null = null;
    const starting = (async () => {
      const h = await this.timed(part);
      handle = { h };
      if (this.opts.failAt === part.name) throw new Error(`failAt: ${part.name} (a test's injected failure)`);
      return h;
    })().catch((err: unknown) => {
      throw new PartStartError(part.name, err);
    });
    // Awaited by complete() or by a stop; the caller's own uses of it handle their rejection.
    starting.catch(() => {});
    this.behind.push(starting);
    let stopped: Promise<void> | null = null;
    this.started.push({
      name: part.name,
      stop: () =>
        (stopped ??= starting.then(
          async () => void (await part.stop?.(handle!.h)),
          async () => void (handle && (await part.stop?.(handle.h))),
        )),
    });
    return starting;
  }

  /**
   * Every part has started: the ones started behind are waited for (the first that failed is
   * thrown once all are stopped). With a failAt that named none of them, stops them all and throws.
   */
  async complete(): Promise<void> {
    for (const starting of this.behind) {
      try {
        await starting;
      } catch (err) {
        await this.stop().catch(() => {});
        throw err;
      }
    }
    const { failAt } = this.opts;
    if (failAt === undefined || this.started.some((p) => p.name === failAt)) return;
    await this.stop().catch(() => {});
    throw new Error(`failAt: no part is named ${JSON.stringify(failAt)} (${this.names().join(', ')})`);
  }

  /** The started parts' names, in the order they started. */
  names(): string[] {
    return this.started.map((p) => p.name);
  }

  /** One shutdown step per started part, in reverse order, for a process's shutdown to run one by one. */
  steps(): ShutdownStep[] {
    return [...this.started].reverse().map((p) => ({ name: p.name, run: () => this.stopOne(p) }));
  }

  /**
   * Stop every started part in reverse order. Each failure is logged and the rest still stop;
   * the first failure then rejects. Asked again, the same promise.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      let failure: { err: unknown } | null = null;
      for (const step of this.steps()) {
        try {
          await step.run();
        } catch (err) {
          failure ??= { err };
        }
      }
      if (failure) throw failure.err;
    })();
    return this.stopping;
  }

  /**
   * Its start, logged at debug with how long it took and the process's CPU and time so far:
   * a start's timeline (load/fleet/run.ts's MASTER_LOG reads it for a master).
   */
  private async timed<H>(part: Part<H>): Promise<H> {
    const began = performance.now();
    const handle = await part.start();
    const now = performance.now();
    const { user, system } = process.cpuUsage();
    this.opts.log.debug(
      {
        part: part.name,
        ms: Math.round(now - began),
        processMs: Math.round(now),
        processCpuMs: Math.round((user + system) / 1000),
      },
      'part started',
    );
    return handle;
  }

  private async stopOne(p: Started): Promise<void> {
    try {
      await p.stop();
    } catch (err) {
      this.opts.log.error({ part: p.name, err }, 'stop failed');
      throw err;
    }
  }
}
