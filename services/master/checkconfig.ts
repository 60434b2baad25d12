// `npm run checkconfig -- master.yaml`: Buildbot's `buildbot checkconfig` for Flotilla. It runs the
// checks the master runs at start (config-check.ts) and starts nothing: no database, no Redis, no
// listener. Exit 0 with a one-line summary when the file loads; exit 1 with every problem (each
// with the path of its key) otherwise. Keys Flotilla ignores are named on stderr, as at start.
import { ConfigError } from '../core/config/errors.js';
import { ignoredKeys, type MasterConfig } from '../core/config/master-config.js';
import { checkMasterConfig } from './config-check.js';

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** The one line a configuration that loads gets. */
export function summary(path: string, c: MasterConfig): string {
  const schedulers = c.schedulers.length + c.force_schedulers.length;
  return `${path}: ok: ${[
    plural(c.builders.length, 'builder'),
    plural(c.workers.length, 'worker'),
    `${plural(schedulers, 'scheduler')} (${c.force_schedulers.length} force)`,
    plural(c.reporters.length, 'reporter'),
    plural(c.change_sources.length, 'change source'),
  ].join(', ')}`;
}

function main(args: string[]): number {
  const path = args[0];
  if (args.length !== 1 || !path || path.startsWith('-')) {
    process.stderr.write('usage: npm run checkconfig -- path/to/master.yaml\n');
    return 1;
  }
  try {
    const config = checkMasterConfig(path, process.env);
    for (const { key, reason } of ignoredKeys(config))
      process.stderr.write(`warning: ${key} is ignored: ${reason}\n`);
    process.stdout.write(`${summary(path, config)}\n`);
    return 0;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.code}: ${err.message}\n`);
    return 1;
  }
}

process.exitCode = main(process.argv.slice(2));
