// What a step kind is: a function from the step's context and a signal to its outcome. The
// lifecycle around it (the step's row, doStepIf, its URLs, its state strings, its end) is
// run-step.ts's; a kind only does its work. Adding a kind: a file here exporting a StepKind,
// its line in index.ts, and its schema in core/config/master-config/steps.ts.
import type { Redis } from 'ioredis';
import type {
  BuilderConfig,
  MasterConfig,
  Renderable,
  StepConfig,
} from '../../../core/config/master-config.js';
import type { DataContext, LogCodec, SourceStampFacts } from '../../../core/data/index.js';
import type { Subscribe } from '../../../core/events/bus.js';
import type { ObjectStore } from '../../../core/objstore/client.js';
import type { Logger } from '../../../core/telemetry/logger.js';
import type { Lease } from '../../claims.js';
import type { SecretsProvider } from '../../secrets.js';
import type { WorkerConnection } from '../../workers/connection.js';
import type { Properties } from '../interpolate.js';
import type { Locks } from '../locks.js';
import type { Redactor } from '../redact.js';
import type { StepWrites } from '../step-writes.js';

export interface StepOutcome {
  results: number;
  /** The step's final state string. */
  summary: string;
  /** The summary the build shows, when it differs from the step's (a trigger's). */
  buildSummary?: string;
  /** The worker can no longer be trusted with this build (its output could not be stored): why. */
  workerLost?: string;
}

export interface BuildMetrics {
  buildFinished(results: number, seconds: number): void;
  linesStored(lines: number): void;
  /** A write of a running build failed because the database was away, and is tried again. */
  buildWriteRetried?(): void;
}

/** What every build and step of a master shares. */
export interface BuildDeps {
  ctx: DataContext;
  redis: Redis;
  config: MasterConfig;
  /** The events of the cluster (a trigger step hears its build sets complete). */
  events: Subscribe;
  masterid: () => number;
  workerId: (name: string) => number | undefined;
  codec: LogCodec;
  log: Logger;
  /** Where `%(secret:...)s` finds its values. */
  secrets: SecretsProvider;
  /** The cluster's locks (builders' and steps'). */
  locks: Locks;
  /** A log finished: queue its compression. */
  onLogFinished?: (logid: number) => void;
  /** An artifact is complete: queue its move to the object store (none configured: nothing). */
  onArtifactComplete?: (id: number) => void;
  /** Where moved artifacts are read from (object_store); none: only PostgreSQL's. */
  objectStore?: ObjectStore | null;
  metrics?: BuildMetrics;
  /** How often a waiting trigger step looks for what no event told it (default its module's). */
  triggerPollMs?: number;
  /** The master's lease: while it holds, a build's writes wait for a database that is away. */
  lease: Lease;
  /**
   * How long after its worker was found gone a build hands its request back: until that
   * worker must have killed its commands (liveness.ts).
   */
  lostWorkerWaitMs: number;
}

export interface StepContext<C extends StepConfig = StepConfig> {
  /** The step's configuration. */
  step: C;
  stepid: number;
  /** The build's properties as the step starts. */
  props: Properties;
  /** What the step says it does (its description, or its kind's), for its summary. */
  text: string | null;
  build: BuildFacts;
  deps: BuildDeps;
  /** The step's transactions, carrying the writes folded into them (step-writes.ts). */
  writes: StepWrites;
  /** A template with this build's values as the step starts (interpolate.ts); throws InterpolationError. */
  render(r: Renderable): string;
}

/** The build a step belongs to. */
export interface BuildFacts {
  buildid: number;
  bsid: number;
  builder: BuilderConfig;
  worker: WorkerConnection;
  /** Its source stamps, one per codebase. */
  sourcestamps: readonly SourceStampFacts[];
  /** The secrets its templates used, kept out of its logs and state strings. */
  redactor: Redactor;
  /**
   * Gives its place in the master's start gate (start-gate.ts) to the next build: called as
   * its first command goes to the worker, or before anything that may wait long; idempotent.
   */
  leaveStartGate: () => void;
  /**
   * Its transactions between steps: the first step's row carries its worker_preparation
   * (run-build.ts' prepare says why); empty afterwards, a plain transaction.
   */
  writes: StepWrites;
}

export interface StepKind<C extends StepConfig = StepConfig> {
  /** The name of a step that the configuration leaves unnamed. */
  defaultName: string;
  /** When the kind names its steps after their configuration (a source step's codebase). */
  nameOf?(step: C): string;
  /** What a step of this kind says it does, its templates rendered (Buildbot's describe). */
  describe(step: C, render: (r: Renderable) => string): string | null;
  /**
   * The kind's first write is its command's log (runCommand): the step's `running` state
   * string is folded into that log's transaction (step-writes.ts) rather than its own.
   */
  logFirst?: true;
  /**
   * Do the step's work. An abort of `signal` interrupts it: it then ends soon, with
   * interruptedResults(signal) (interruption.ts), and leaves nothing running.
   */
  run(ctx: StepContext<C>, signal: AbortSignal): Promise<StepOutcome>;
}
