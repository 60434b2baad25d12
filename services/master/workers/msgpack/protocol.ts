// Buildbot's msgpack_experimental_v7 in the map of worker protocols (../protocols.ts): on when
// the configuration names it, at its port or MSGPACK_WORKER_PORT.
import { builderDir, workerPassword } from '../../../core/config/master-config.js';
import { configuredSite, type WorkerProtocol } from '../protocol.js';
import { startMsgpackWorkerServer } from './server.js';

export const msgpackProtocol: WorkerProtocol = {
  site: (config, d) =>
    configuredSite('msgpack_experimental_v7', config.protocols.msgpack_experimental_v7, d, {
      port: d.msgpackPort,
      setting: 'MSGPACK_WORKER_PORT',
    }),
  start: (at, ctx) =>
    startMsgpackWorkerServer({
      ...at,
      ...(ctx.tls ? { tls: ctx.tls } : {}),
      passwords: new Map(ctx.config.workers.map((w) => [w.name, workerPassword(w, ctx.env)])),
      builderDirs: (name) => ctx.config.builders.filter((b) => b.workers.includes(name)).map(builderDir),
      connectedElsewhere: ctx.connectedElsewhere,
      throttle: ctx.throttle,
      log: ctx.log,
      events: ctx.events,
    }),
};
