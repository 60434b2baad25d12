// Clean shutdown on SIGTERM (Kubernetes) and SIGINT (a terminal): run the registered steps
// in order, each bounded, then exit. A second signal exits at once.
import type { Logger } from './telemetry/logger.js';

export type ShutdownStep = { name: string; run: () => Promise<unknown> };

export function onShutdown(log: Logger, steps: () => ShutdownStep[], graceMs = 25_000): void {
  let stopping = false;
  const handler = async (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    const hard = setTimeout(() => {
      log.error({ graceMs }, 'shutdown took too long; exiting');
      process.exit(1);
    }, graceMs);
    hard.unref();
    let code = 0;
    for (const step of steps()) {
      try {
        await step.run();
      } catch (err) {
        code = 1;
        log.error({ step: step.name, err }, 'shutdown step failed');
      }
    }
    log.info('stopped');
    process.exit(code);
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
