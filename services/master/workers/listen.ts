// Where a master's workers connect, by protocol (the `protocols` section of its
// configuration, in Buildbot's c['protocols'] shape): Flotilla's own (flotilla/, on
// WORKER_PORT unless the section names a port) and, when configured, Buildbot's
// msgpack_experimental_v7 (msgpack/), for buildbot-worker. The master sees one set of
// connected workers; a worker name is connected once, whichever protocol it came by.
import { ConfigError } from '../../core/config/errors.js';
import { builderDir, type MasterConfig, workerPassword } from '../../core/config/master-config.js';
import { listenAt } from '../../core/http/listen-error.js';
import type { Logger } from '../../core/telemetry/logger.js';
import type { ConnectedWorkers, WorkerConnection, WorkerEvents } from './connection.js';
import { startWorkerServer } from './flotilla/server.js';
import { WorkerLoginThrottle } from './login-throttle.js';
import { startMsgpackWorkerServer } from './msgpack/server.js';

export interface WorkerListeners extends ConnectedWorkers {
  /** The port each protocol listens on. */
  ports: { flotilla: number; msgpack_experimental_v7?: number };
}

/** Two protocols asked to listen on one port (the configuration's, or the environment's). */
export function workerPortProblems(
  config: MasterConfig,
  workerPort: number,
  msgpackPort?: number | null,
): string[] {
  const flotilla = config.protocols.flotilla?.port ?? workerPort;
  const msgpack = config.protocols.msgpack_experimental_v7
    ? (msgpackPort ?? config.protocols.msgpack_experimental_v7.port)
    : undefined;
  return msgpack !== undefined && msgpack !== 0 && msgpack === flotilla
    ? [
        `protocols.msgpack_experimental_v7.port: ${msgpack} is Flotilla's protocol's port too (WORKER_PORT or protocols.flotilla.port)`,
      ]
    : [];
}

export async function listenForWorkers(opts: {
  config: MasterConfig;
  /** The listening address when the configuration names none (HOST). */
  host: string;
  /** Flotilla's protocol's port when the configuration names none (WORKER_PORT). */
  workerPort: number;
  /** msgpack_experimental_v7's port instead of the configuration's (MSGPACK_WORKER_PORT). */
  msgpackPort?: number | null;
  masterName: string;
  log: Logger;
  events: WorkerEvents;
  /** Where a worker's `password_env` is looked up. */
  env: Record<string, string | undefined>;
  tls?: { cert: Buffer | string; key: Buffer | string };
}): Promise<WorkerListeners> {
  const { config } = opts;
  const flotillaAt = config.protocols.flotilla;
  const msgpackAt = config.protocols.msgpack_experimental_v7;
  const flotillaPort = flotillaAt?.port ?? opts.workerPort;
  const msgpackPort = opts.msgpackPort ?? msgpackAt?.port;
  const problems = workerPortProblems(config, opts.workerPort, opts.msgpackPort);
  if (problems.length) throw new ConfigError('CONFIG_REFERENCE', 'two protocols on one port', problems);
  let msgpack: Awaited<ReturnType<typeof startMsgpackWorkerServer>> | null = null;
  // One count of failed logins for both listeners: a guesser gains nothing by switching.
  const throttle = new WorkerLoginThrottle();
  // A port that cannot be had is said with the setting that gave it (the configuration's key
  // when it names one, else the environment's variable).
  const flotillaSite = {
    what: "the workers' port (Flotilla's protocol)",
    host: flotillaAt?.host ?? opts.host,
    port: flotillaPort,
    portSetting: flotillaAt?.port !== undefined ? 'protocols.flotilla.port' : 'WORKER_PORT',
    hostSetting: flotillaAt?.host !== undefined ? "protocols.flotilla.port's interface" : 'HOST',
  };
  const flotilla = await listenAt(flotillaSite, () =>
    startWorkerServer({
      host: flotillaSite.host,
      port: flotillaSite.port,
      ...(opts.tls ? { tls: opts.tls } : {}),
      config,
      masterName: opts.masterName,
      env: opts.env,
      log: opts.log,
      events: opts.events,
      connectedElsewhere: (name) => msgpack?.get(name) !== undefined,
      throttle,
    }),
  );
  if (msgpackAt) {
    const msgpackSite = {
      what: "the workers' port (msgpack_experimental_v7)",
      host: msgpackAt.host ?? opts.host,
      port: msgpackPort ?? msgpackAt.port,
      portSetting:
        opts.msgpackPort != null ? 'MSGPACK_WORKER_PORT' : 'protocols.msgpack_experimental_v7.port',
      hostSetting:
        msgpackAt.host !== undefined ? "protocols.msgpack_experimental_v7.port's interface" : 'HOST',
    };
    try {
      msgpack = await listenAt(msgpackSite, () =>
        startMsgpackWorkerServer({
          host: msgpackSite.host,
          port: msgpackSite.port,
          ...(opts.tls ? { tls: opts.tls } : {}),
          passwords: new Map(config.workers.map((w) => [w.name, workerPassword(w, opts.env)])),
          builderDirs: (name) => config.builders.filter((b) => b.workers.includes(name)).map(builderDir),
          connectedElsewhere: (name) => flotilla.get(name) !== undefined,
          throttle,
          log: opts.log,
          events: opts.events,
        }),
      );
    } catch (err) {
      await flotilla.close();
      throw err;
    }
  }
  const m = msgpack;
  return {
    ports: { flotilla: flotilla.port, ...(m ? { msgpack_experimental_v7: m.port } : {}) },
    connected: (): WorkerConnection[] => [...flotilla.connected(), ...(m?.connected() ?? [])],
    get: (name) => flotilla.get(name) ?? m?.get(name),
    close: async () => {
      await Promise.all([flotilla.close(), m?.close()]);
    },
  };
}
