// Buildbot's msgpack_experimental_v7 in the map of worker protocols (../protocols.ts): on when
// the configuration names it, at its port or MSGPACK_WORKER_PORT.
import { workerPassword } from '../../../core/config/master-config.js';
import type { WorkerProtocol } from '../protocol.js';
import { startMsgpackWorkerServer } from './server.js';

export const msgpackProtocol: WorkerProtocol = {
  site: (config, d) => {
    const at = config.protocols.msgpack_experimental_v7;
    if (!at) return null;
    return {
      what: "the workers' port (msgpack_experimental_v7)",
      host: at.host ?? d.host,
      port: d.msgpackPort ?? at.port,
      portSetting: d.msgpackPort != null ? 'MSGPACK_WORKER_PORT' : 'protocols.msgpack_experimental_v7.port',
      hostSetting: at.host !== undefined ? "protocols.msgpack_experimental_v7.port's interface" : 'HOST',
    };
  },
  start: (at, ctx) =>
    startMsgpackWorkerServer({
      ...at,
      ...(ctx.tls ? { tls: ctx.tls } : {}),
      passwords: new Map(ctx.config.workers.map((w) => [w.name, workerPassword(w, ctx.env)])),
      builderDirs: (name) => ctx.config.builders.filter((b) => b.workers.includes(name)).map((b) => b.name),
      connectedElsewhere: ctx.connectedElsewhere,
      throttle: ctx.throttle,
      log: ctx.log,
      events: ctx.events,
    }),
};
