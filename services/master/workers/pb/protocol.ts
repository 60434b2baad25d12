// Buildbot's PB in the map of worker protocols (../protocols.ts): on when the configuration
// names `protocols.pb`, at its port or PB_WORKER_PORT. The port's accounts are the context's (shared with the
// master's other PB users), with the configured workers added (./workers.ts), the pb change
// sources' users (./change-source.ts) and the try_userpass schedulers' (./try-userpass.ts).
import type { MasterConfig } from '../../../core/config/master-config.js';
import { configuredSite, type WorkerProtocol } from '../protocol.js';

export const pbProtocol: WorkerProtocol = {
  site: (config, d) =>
    configuredSite('pb', config.protocols.pb, d, { port: d.pbPort, setting: 'PB_WORKER_PORT' }),
  start: async (at, ctx) => {
    // Loaded when configured: ../protocols.ts says why.
    const [{ registerPbChangeSources }, { startPbListener }, { registerTryUsers }, { registerPbWorkers }] =
      await Promise.all([
        import('./change-source.js'),
        import('./listener.js'),
        import('./try-userpass.js'),
        import('./workers.js'),
      ]);
    // The accounts first: a worker that logs in as soon as the port opens is known.
    const workers = registerPbWorkers(ctx.pbAccounts, ctx);
    // The other users of the port, registered anew from a reloaded configuration.
    const others = (config: MasterConfig) => {
      const changeSources = config.change_sources.filter((c) => c.type === 'pb');
      const tries = config.schedulers.flatMap((s) => (s.type === 'try_userpass' ? [s] : []));
      const removers = [
        registerPbChangeSources(ctx.pbAccounts, changeSources, ctx.events.addChange, ctx.log),
        registerTryUsers(ctx.pbAccounts, tries, ctx.events.tries, ctx.log),
      ];
      return () => {
        for (const remove of removers) remove();
      };
    };
    let removeOthers = others(ctx.config);
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
      reconfigure: (config) => {
        removeOthers();
        workers.reconfigure?.(config);
        removeOthers = others(config);
      },
      close: () => listener.close(),
    };
  },
};
