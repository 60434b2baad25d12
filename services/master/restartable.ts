// A part of the master that a reload restarts when the sections it reads change (the
// reporters, the old build cancellers: master/reconfigure.ts): what runs now, and how to stop
// it and start one for another configuration. The master's parts hold the Restartable, so
// that a stop after a reload stops what runs then.
import type { MasterConfig } from '../core/config/master-config.js';

export class Restartable<H> {
  private constructor(
    readonly name: string,
    /** The sections it reads: a reload that changes none of them leaves it running. */
    readonly sections: readonly (keyof MasterConfig)[],
    private readonly make: (config: MasterConfig) => Promise<H>,
    private readonly end: (handle: H) => Promise<unknown>,
    /** What runs now; null between a stop and the start that follows it. */
    public current: H | null,
  ) {}

  static async start<H>(
    name: string,
    sections: readonly (keyof MasterConfig)[],
    make: (config: MasterConfig) => Promise<H>,
    end: (handle: H) => Promise<unknown>,
    config: MasterConfig,
  ): Promise<Restartable<H>> {
    return new Restartable(name, sections, make, end, await make(config));
  }

  /** Stop what runs, then start it for `config` (a start that fails leaves none running). */
  async restart(config: MasterConfig): Promise<void> {
    await this.stop();
    this.current = await this.make(config);
  }

  async stop(): Promise<void> {
    const running = this.current;
    this.current = null;
    if (running !== null) await this.end(running);
  }
}
