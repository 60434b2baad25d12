// How a process ends on a start-up error, the same way for every start-up error: one log line
// with the error's code, message and problems (no stack trace: the message says what to
// change), and exit code 2. Errors that are not ConfigErrors are bugs, and go on as thrown.
import type { Logger } from '../telemetry/logger.js';
import { ConfigError } from './errors.js';

/** Run a start-up step; a ConfigError from it ends the process as said above. */
export async function exitOnConfigError<T>(log: Logger, step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    log.fatal({ code: err.code, problems: err.problems }, err.message);
    process.exit(2);
  }
}
