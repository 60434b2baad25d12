// Buildbot's msgpack_experimental_v7 in the map of worker protocols (../protocols.ts): on when
// the configuration names it, at its port or MSGPACK_WORKER_PORT.
import { builderDir, workerPassword } from '../../../core/config/master-config.js';
import { configuredSite, type WorkerProtocol } from '../protocol.js';

export const msgpackProtocol: WorkerProtocol = {
  site: (config, d) =>
    configuredSite('msgpack_experimental_v7', config.protocols.msgpack_experimental_v7, d, {
      port: d.msgpackPort,
      setting: 'MSGPACK_WORKER_PORT',
    }),
  start: async (at, ctx) => {
    // Both refilled by a reloaded configuration (the server reads them at each login).
    let config = ctx.config;
    const passwords = new Map<string, string>();
    const fill = () => {
      passwords.clear();
      for (const w of config.workers) passwords.set(w.name, workerPassword(w, ctx.env));
    };
    fill();
    // Loaded when configured: ../protocols.ts says why.
    const { startMsgpackWorkerServer } = await import('./server.js');
    const server = await startMsgpackWorkerServer({
      ...at,
      ...(ctx.tls ? { tls: ctx.tls } : {}),
      passwords,
      builderDirs: (name) => config.builders.filter((b) => b.workers.includes(name)).map(builderDir),
      connectedElsewhere: ctx.connectedElsewhere,
      throttle: ctx.throttle,
      log: ctx.log,
      events: ctx.events,
    });
    return {
      port: server.port,
      connected: () => server.connected(),
      get: (name) => server.get(name),
      close: () => server.close(),
      reconfigure: (next) => {
        config = next;
        fill();
      },
    };
  },
};
