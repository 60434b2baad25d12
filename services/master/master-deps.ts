// What a master is given (MasterDeps: the process, service.ts, or a test makes them) and what
// it answers (Master): the types of master.ts's startMaster, apart from the list of its parts.
import type { Redis } from 'ioredis';
import type { MasterConfig } from '../core/config/master-config.js';
import type { ConfigVersion } from '../core/config/version.js';
import type { ConnectionPool } from '../core/db/pool.js';
import type { Subscribe } from '../core/events/bus.js';
import type { ShutdownStep } from '../core/lifecycle.js';
import type { Logger } from '../core/telemetry/logger.js';
import type { BuildRunner } from './builds/runner.js';
import type { Distributor } from './distributor.js';
import type { RedisTarget } from './jobs/queues.js';
import type { SchedulerManager } from './schedulers/index.js';
import type { ConnectedWorkers, WorkerEvents } from './workers/connection.js';

export interface MasterDeps {
  db: ConnectionPool;
  redis: Redis;
  /** Where the background jobs' queues live (BullMQ opens connections of its own). */
  jobsRedis: RedisTarget;
  /** Redis key prefix of the job queues (default theirs); the cluster must agree on it. */
  jobsPrefix?: string;
  /** The process's subscription to the cluster's events, and when it is live. */
  events: Subscribe & { ready: Promise<void> };
  config: MasterConfig;
  /** The master's name (`host:basedir`, or the pod's name): its row in `masters`. */
  name: string;
  log: Logger;
  /** Start what workers connect to, telling `events` as they come and go. */
  listenForWorkers: (events: WorkerEvents) => Promise<ConnectedWorkers>;
  /** Scratch files (git pollers' mirrors); nothing in it must survive. */
  workdir: string;
  /** The environment commands the master runs itself get (git's). */
  env: Readonly<Record<string, string | undefined>>;
  /** How long stop() lets running builds finish before handing them back (default DEFAULT_DRAIN_MS). */
  drainMs?: number;
  /** Tests speed these up; the defaults are the module's. */
  timing?: {
    distributorPollMs?: number;
    claimRenewMs?: number;
    schedulerRoundMs?: number;
    triggerPollMs?: number;
    /** The reporters' first retry delay. */
    reportBackoffMs?: number;
  };
  /** Tests only: the start fails right after the part of this name started (core/lifecycle/parts.ts). */
  failAt?: string;
}

export interface Master {
  readonly masterid: number;
  readonly runner: BuildRunner;
  readonly distributor: Distributor;
  readonly workers: ConnectedWorkers;
  readonly schedulers: SchedulerManager;
  /** Which configuration it runs (core/config/version.ts): its probe port's /readyz says it. */
  readonly config: ConfigVersion;
  /**
   * Run a reloaded configuration, the parts whose sections changed reconfigured, no build
   * stopped (reconfigure.ts). A ConfigError refuses it before anything changed.
   */
  reconfigure(config: MasterConfig, version: ConfigVersion): Promise<{ changed: string[] }>;
  /** Prometheus text of the master and its jobs. */
  metrics(): Promise<{ contentType: string; body: string }>;
  /** The steps of a clean stop (one per part, in reverse), for a process's shutdown to run one by one. */
  shutdownSteps(): ShutdownStep[];
  /** Run those steps; the first failure rejects after the rest have run. */
  stop(): Promise<void>;
}
