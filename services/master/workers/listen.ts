// Where a master's workers connect, by protocol (the `protocols` section of its
// configuration, in Buildbot's c['protocols'] shape; ./protocols.ts maps each key to its
// protocol): Flotilla's own always, on WORKER_PORT unless the section names a port, and each
// of Buildbot's that the section names (msgpack_experimental_v7, pb). The master sees one set of connected workers; a
// worker name is connected once, whichever protocol it came by, and failed logins are
// counted once for all of them.
import { ConfigError } from '../../core/config/errors.js';
import type { MasterConfig } from '../../core/config/master-config.js';
import { type ListenSite, listenAt } from '../../core/http/listen-error.js';
import type { Logger } from '../../core/telemetry/logger.js';
import type { ConnectedWorkers, WorkerConnection, WorkerEvents } from './connection.js';
import { WorkerLoginThrottle } from './login-throttle.js';
import { PbAccounts } from './pb/accounts.js';
import type { ListenDefaults, ProtocolListener } from './protocol.js';
import { type ProtocolName, WORKER_PROTOCOLS } from './protocols.js';

export interface WorkerListeners extends ConnectedWorkers {
  /** The port each protocol listens on (Flotilla's always). */
  ports: { flotilla: number } & { [K in ProtocolName]?: number };
}

/** Each configured protocol's address, in the map's order. */
function sites(config: MasterConfig, defaults: ListenDefaults): [ProtocolName, ListenSite][] {
  const out: [ProtocolName, ListenSite][] = [];
  for (const name of Object.keys(WORKER_PROTOCOLS) as ProtocolName[]) {
    const site = WORKER_PROTOCOLS[name].site(config, defaults);
    if (site) out.push([name, site]);
  }
  return out;
}

/** Two protocols asked to listen on one port (the configuration's, or the environment's). */
export function workerPortProblems(config: MasterConfig, ports: Omit<ListenDefaults, 'host'>): string[] {
  const all = sites(config, { host: '', ...ports });
  const problems: string[] = [];
  all.forEach(([, b], i) => {
    const a = all.slice(0, i).find(([, a]) => a.port === b.port && b.port !== 0)?.[1];
    if (a) problems.push(`${b.portSetting}: ${b.port} is ${a.what} too (${a.portSetting})`);
  });
  return problems;
}

export async function listenForWorkers(opts: {
  config: MasterConfig;
  /** The listening address when the configuration names none (HOST). */
  host: string;
  /** Flotilla's protocol's port when the configuration names none (WORKER_PORT). */
  workerPort: number;
  /** msgpack_experimental_v7's port instead of the configuration's (MSGPACK_WORKER_PORT). */
  msgpackPort?: number | null;
  /** PB's port instead of the configuration's (PB_WORKER_PORT). */
  pbPort?: number | null;
  masterName: string;
  log: Logger;
  events: WorkerEvents;
  /** Where a worker's `password_env` is looked up. */
  env: Record<string, string | undefined>;
  tls?: { cert: Buffer | string; key: Buffer | string };
  /** The PB port's users besides the workers (./pb/accounts.ts); default: the workers only. */
  pbAccounts?: PbAccounts;
}): Promise<WorkerListeners> {
  const { config } = opts;
  const ports = {
    workerPort: opts.workerPort,
    msgpackPort: opts.msgpackPort ?? null,
    pbPort: opts.pbPort ?? null,
  };
  const problems = workerPortProblems(config, ports);
  if (problems.length) throw new ConfigError('CONFIG_REFERENCE', 'two protocols on one port', problems);
  const started: [ProtocolName, ProtocolListener][] = [];
  const ctx = {
    config,
    masterName: opts.masterName,
    log: opts.log,
    events: opts.events,
    env: opts.env,
    ...(opts.tls ? { tls: opts.tls } : {}),
    throttle: new WorkerLoginThrottle(),
    pbAccounts: opts.pbAccounts ?? new PbAccounts(),
  };
  const defaults = { host: opts.host, ...ports };
  for (const [name, site] of sites(config, defaults)) {
    try {
      // A port that cannot be had is said with the setting that gave it.
      const listener = await listenAt(site, () =>
        WORKER_PROTOCOLS[name].start(
          { host: site.host, port: site.port },
          {
            ...ctx,
            connectedElsewhere: (worker) =>
              started.some(([n, l]) => n !== name && l.get(worker) !== undefined),
          },
        ),
      );
      started.push([name, listener]);
    } catch (err) {
      await Promise.all(started.map(([, l]) => l.close()));
      throw err;
    }
  }
  const listeners = started.map(([, l]) => l);
  return {
    ports: Object.fromEntries(started.map(([n, l]) => [n, l.port])) as WorkerListeners['ports'],
    connected: (): WorkerConnection[] => listeners.flatMap((l) => l.connected()),
    get: (name) => {
      for (const l of listeners) {
        const w = l.get(name);
        if (w) return w;
      }
      return undefined;
    },
    close: async () => {
      await Promise.all(listeners.map((l) => l.close()));
    },
    // The ports stay (a change of them is refused before this: master/reconfigure.ts).
    reconfigure: (next) => {
      for (const l of listeners) l.reconfigure?.(next);
    },
  };
}
