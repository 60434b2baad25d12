// Flotilla's own protocol in the map of worker protocols (../protocols.ts): always on, at
// protocols.flotilla.port, else WORKER_PORT.
import type { WorkerProtocol } from '../protocol.js';
import { startWorkerServer } from './server.js';

export const flotillaProtocol: WorkerProtocol = {
  site: (config, d) => {
    const at = config.protocols.flotilla;
    return {
      what: "the workers' port (Flotilla's protocol)",
      host: at?.host ?? d.host,
      port: at?.port ?? d.workerPort,
      portSetting: at?.port !== undefined ? 'protocols.flotilla.port' : 'WORKER_PORT',
      hostSetting: at?.host !== undefined ? "protocols.flotilla.port's interface" : 'HOST',
    };
  },
  start: (at, ctx) =>
    startWorkerServer({
      ...at,
      ...(ctx.tls ? { tls: ctx.tls } : {}),
      config: ctx.config,
      masterName: ctx.masterName,
      env: ctx.env,
      log: ctx.log,
      events: ctx.events,
      connectedElsewhere: ctx.connectedElsewhere,
      throttle: ctx.throttle,
    }),
};
