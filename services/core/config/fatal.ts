// How a process ends on a start-up error, the same way for every start-up error: one log line
// with the error's code, message and problems (no stack trace: the message says what to
// change), and exit code 2. Errors that are not ConfigErrors are bugs, and go on as thrown.
// A ConfigError may arrive wrapped (a composition root's part that failed to start says which
// part in an error whose cause is the ConfigError: lifecycle/parts.ts): the cause decides.
import type { Logger } from '../telemetry/logger.js';
import { ConfigError } from './errors.js';

/** Run a start-up step; a ConfigError from it ends the process as said above. */
export async function exitOnConfigError<T>(log: Logger, step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    const config = configErrorIn(err);
    if (!config) throw err;
    log.fatal({ code: config.code, problems: config.problems }, config.message);
    process.exit(2);
  }
}

/** The ConfigError an error is, or was caused by (a few levels of `cause`), if any. */
export function configErrorIn(err: unknown): ConfigError | null {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++)
    if (e instanceof ConfigError) return e;
  return null;
}
