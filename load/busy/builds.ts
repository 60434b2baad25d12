// The build load of the busy-cluster benchmark: keeps `target` builds of one builder running,
// through the REST API alone, so that the same code drives Flotilla and Buildbot 3.7. Every
// second it counts the builder's unfinished requests (queued or running) and forces as many
// new ones as are missing through the force scheduler's JSON-RPC `force`, the way a person
// or a hook would start them (load/force.ts). It samples how many builds run, to report the
// load actually held.
import { forceBuildSet } from '../force.js';

export interface BuildLoadReport {
  forced: number;
  /** Builds of the builder that finished while the load ran. */
  finished: number;
  /** Running builds: fewest and most seen, and their mean over the samples. */
  running: { min: number; max: number; mean: number; samples: number };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class BuildLoad {
  private stopped = false;
  private loop?: Promise<void>;
  private forced = 0;
  private samples: number[] = [];
  private finishedAtStart = 0;
  private builderid = 0;
  private sampling = false;
  private error?: Error;

  constructor(
    private readonly base: string,
    private readonly scheduler: string,
    private readonly builder: string,
    private readonly target: number,
  ) {}

  private async get(path: string): Promise<any> {
    const res = await fetch(this.base + path, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(60_000),
    });
    if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
    return res.json();
  }

  private async force(): Promise<void> {
    await forceBuildSet(
      this.base,
      this.scheduler,
      { username: 'busy <busy@example.invalid>', reason: 'busy-cluster benchmark' },
      { headers: { accept: 'application/json' }, timeoutMs: 60_000 },
    );
    this.forced++;
  }

  async running(): Promise<number> {
    return (
      await this.get(
        `/builds?builderid=${this.builderid}&complete=false&field=buildid&field=builderid&field=complete`,
      )
    ).builds.length;
  }

  private async finished(): Promise<number> {
    return (
      await this.get(
        `/builds?builderid=${this.builderid}&complete=true&field=buildid&field=builderid&field=complete`,
      )
    ).builds.length;
  }

  async start(): Promise<void> {
    const builders = (await this.get(`/builders?name=${encodeURIComponent(this.builder)}`)).builders;
    if (!builders[0]) throw new Error(`no builder "${this.builder}"`);
    this.builderid = builders[0].builderid;
    this.finishedAtStart = await this.finished();
    this.loop = (async () => {
      while (!this.stopped) {
        const unfinished = (
          await this.get(
            `/buildrequests?builderid=${this.builderid}&complete=false&field=buildrequestid&field=builderid&field=complete`,
          )
        ).buildrequests.length;
        for (let i = unfinished; i < this.target && !this.stopped; i++) await this.force();
        if (this.sampling) this.samples.push(await this.running());
        await sleep(1000);
      }
    })().catch((err: Error) => {
      this.error = err;
    });
  }

  /** Waits until `target` builds run at once (within limitMs), then samples from there on. */
  async fullyRunning(limitMs = 300_000): Promise<void> {
    const end = Date.now() + limitMs;
    for (;;) {
      if (this.error) throw this.error;
      const n = await this.running();
      if (n >= this.target) break;
      if (Date.now() > end)
        throw new Error(`only ${n} of ${this.target} builds running after ${limitMs / 1000} s`);
      await sleep(1000);
    }
  }

  /** Starts counting: running builds sampled, finished builds counted from now. */
  async mark(): Promise<void> {
    this.samples = [];
    this.finishedAtStart = await this.finished();
    this.sampling = true;
  }

  async report(): Promise<BuildLoadReport> {
    const s = this.samples;
    return {
      forced: this.forced,
      finished: (await this.finished()) - this.finishedAtStart,
      running: {
        min: s.length ? Math.min(...s) : 0,
        max: s.length ? Math.max(...s) : 0,
        mean: s.length ? s.reduce((a, b) => a + b, 0) / s.length : 0,
        samples: s.length,
      },
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    if (this.error) throw this.error;
  }
}
