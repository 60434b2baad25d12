// What one worker protocol is to the master (./protocols.ts holds the map of them, keyed as the
// configuration's `protocols` section): where it listens, given the configuration and the
// environment's defaults, and a start function that listens there and hands over the workers
// it attaches. Everything a protocol shares with the others comes in its context: the one
// count of failed logins and the one-connection-per-worker-name rule across protocols.
import type { MasterConfig } from '../../core/config/master-config.js';
import type { ListenSite } from '../../core/http/listen-error.js';
import type { Logger } from '../../core/telemetry/logger.js';
import type { ConnectedWorkers, WorkerEvents } from './connection.js';
import type { WorkerLoginThrottle } from './login-throttle.js';
import type { PbAccounts } from './pb/accounts.js';

/** The environment's settings a protocol's address may come from when the configuration names none. */
export interface ListenDefaults {
  /** The listening address (HOST). */
  host: string;
  /** Flotilla's protocol's port (WORKER_PORT). */
  workerPort: number;
  /** msgpack_experimental_v7's port instead of the configuration's (MSGPACK_WORKER_PORT). */
  msgpackPort?: number | null;
  /** PB's port instead of the configuration's (PB_WORKER_PORT). */
  pbPort?: number | null;
}

export interface ProtocolContext {
  config: MasterConfig;
  masterName: string;
  log: Logger;
  events: WorkerEvents;
  /** Where a worker's `password_env` is looked up. */
  env: Record<string, string | undefined>;
  tls?: { cert: Buffer | string; key: Buffer | string };
  /** One count of failed logins for every listener: a guesser gains nothing by switching. */
  throttle: WorkerLoginThrottle;
  /** A worker of this name is connected by another protocol. */
  connectedElsewhere(name: string): boolean;
  /**
   * Who else logs in on the PB port (./pb/accounts.ts): Buildbot's PBChangeSource and try
   * users share the workers' port when they name none. The PB protocol adds the workers.
   */
  pbAccounts: PbAccounts;
}

export interface ProtocolListener extends ConnectedWorkers {
  port: number;
}

export interface WorkerProtocol {
  /** Where the protocol listens, with the settings that gave it; null when it is not configured. */
  site(config: MasterConfig, defaults: ListenDefaults): ListenSite | null;
  start(at: { host: string; port: number }, ctx: ProtocolContext): Promise<ProtocolListener>;
}

/**
 * The site of one of Buildbot's protocols, named in the configuration as `protocols.<key>`:
 * its port (or the environment's, `override`, when set) on its interface, else HOST.
 */
export function configuredSite(
  key: string,
  at: { port: number; host?: string } | undefined,
  d: ListenDefaults,
  override?: { port: number | null | undefined; setting: string },
): ListenSite | null {
  if (!at) return null;
  const moved = override?.port != null;
  return {
    what: `the workers' port (${key})`,
    host: at.host ?? d.host,
    port: moved ? (override.port as number) : at.port,
    portSetting: moved ? override.setting : `protocols.${key}.port`,
    hostSetting: at.host !== undefined ? `protocols.${key}.port's interface` : 'HOST',
  };
}
