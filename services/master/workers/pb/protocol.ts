// Buildbot's PB in the map of worker protocols (../protocols.ts): on when the configuration
// names `protocols.pb`, at its port or PB_WORKER_PORT. The port's accounts are the context's (shared with the
// master's other PB users), with the configured workers added (./workers.ts), the pb change
// sources' users (./change-source.ts) and the try_userpass schedulers' (./try-userpass.ts).
import { configuredSite, type WorkerProtocol } from '../protocol.js';
import { registerPbChangeSources } from './change-source.js';
import { startPbListener } from './listener.js';
import { registerTryUsers } from './try-userpass.js';
import { registerPbWorkers } from './workers.js';

export const pbProtocol: WorkerProtocol = {
  site: (config, d) =>
    configuredSite('pb', config.protocols.pb, d, { port: d.pbPort, setting: 'PB_WORKER_PORT' }),
  start: async (at, ctx) => {
    // The accounts first: a worker that logs in as soon as the port opens is known.
    const workers = registerPbWorkers(ctx.pbAccounts, ctx);
    const changeSources = ctx.config.change_sources.filter((c) => c.type === 'pb');
    registerPbChangeSources(ctx.pbAccounts, changeSources, ctx.events.addChange, ctx.log);
    const tries = ctx.config.schedulers.flatMap((s) => (s.type === 'try_userpass' ? [s] : []));
    registerTryUsers(ctx.pbAccounts, tries, ctx.events.tries, ctx.log);
    const listener = await startPbListener({
      ...at,
      accounts: ctx.pbAccounts,
      throttle: ctx.throttle,
      log: ctx.log,
    });
    return {
      port: listener.port,
      connected: () => workers.connected(),
      get: (name) => workers.get(name),
      close: () => listener.close(),
    };
  },
};
