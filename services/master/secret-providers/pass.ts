// Buildbot's SecretInPass: a secret is an entry of the password store that Debian's `pass`
// keeps (gpg-encrypted files), and its value is the entry's first line.
//
// Buildbot facts (buildbot/secrets/providers/passwordstore.py, 3.7): `pass` must be on PATH
// and `dirname`, when given, must exist (both checked when the configuration loads); the store
// is PASSWORD_STORE_DIR=dirname; a key's passphrase goes to gpg through
// PASSWORD_STORE_GPG_OPTS; `pass <entry>` exiting non-zero means no such secret; the value is
// the first line of its output.
// Where we differ: the passphrase reaches gpg on its standard input (`--passphrase-fd 0` in
// batch mode with loopback pinentry), never on a command line that `ps` shows; an entry name
// that could climb out of the store (`..`, a leading `/` or `-`) is no secret.
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { ConfigError } from '../../core/config/errors.js';
import type { SecretsProviderConfig } from '../../core/config/master-config.js';
import { readSecret } from '../../core/config/secret-source.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { type PrefetchedProvider, prefetched } from './prefetched.js';

type PassConfig = Extract<SecretsProviderConfig, { type: 'pass' }>;
type Env = Record<string, string | undefined>;

const onPath = (env: Env) =>
  (env.PATH ?? '').split(delimiter).some((d) => {
    try {
      accessSync(join(d, 'pass'), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });

const SAFE_ENTRY = /^(?![-/])(?!.*(^|\/)\.\.?(\/|$))[^\0]+$/;
const PASS_TIMEOUT_MS = 30_000;
// pass's answer for an entry it does not have (`die "Error: $path is not in the password store."`).
const NOT_IN_STORE = /is not in the password store\./;
const lastLine = (text: string) => text.trim().split(/\r?\n/).pop() ?? '';

export function passProvider(cfg: PassConfig, env: Env, log?: Logger): PrefetchedProvider {
  if (!onPath(env)) throw new ConfigError('CONFIG_REFERENCE', 'secrets: pass does not exist in PATH');
  if (cfg.dirname !== undefined) {
    try {
      accessSync(cfg.dirname);
    } catch {
      throw new ConfigError('CONFIG_REFERENCE', `secrets: directory ${cfg.dirname} does not exist`);
    }
  }
  const passphrase = readSecret(
    'secrets (pass)',
    { fromEnv: cfg.gpgPassphrase_env, fromFile: cfg.gpgPassphrase_file },
    env,
  );
  const childEnv: Env = { ...env };
  if (cfg.dirname !== undefined) childEnv.PASSWORD_STORE_DIR = cfg.dirname;
  if (passphrase !== null)
    childEnv.PASSWORD_STORE_GPG_OPTS = '--batch --pinentry-mode loopback --passphrase-fd 0';
  // Only pass's own "not in the password store" is no such secret; any other failure (gpg's,
  // a timeout) is thrown, so that prefetched.ts logs it: the build sees a missing secret either
  // way, as Buildbot's does, but an operator can tell a wrong passphrase from a typo.
  const read = (name: string) =>
    new Promise<string | undefined>((resolve, reject) => {
      if (!SAFE_ENTRY.test(name)) return resolve(undefined);
      const child = execFile(
        'pass',
        ['show', name],
        { env: childEnv, timeout: PASS_TIMEOUT_MS, encoding: 'utf8' },
        (err, stdout, stderr) => {
          if (!err) return resolve(stdout.split(/\r?\n/)[0] ?? '');
          if (NOT_IN_STORE.test(stderr)) return resolve(undefined);
          const why = err.killed
            ? `no answer within ${PASS_TIMEOUT_MS / 1000} s`
            : lastLine(stderr) || err.message;
          reject(new Error(`pass show failed: ${why}`));
        },
      );
      child.stdin?.end(passphrase ?? '');
    });
  // One `pass show` at a time: each gpg asks the one gpg-agent for the key with the passphrase
  // it was given (loopback), and reads at once against one agent come back empty. A build's
  // two read at once did on a loaded machine (CI, 2026-11-30, test/master/secret-providers.test.ts);
  // 90 started three at a time, half a second apart, gave 46 empty answers, 20 one after another
  // none (the test's store and key, by hand). A build names a few secrets, each read in
  // milliseconds.
  let previous: Promise<unknown> = Promise.resolve();
  const oneAtATime = (name: string) => {
    const next = previous.then(() => read(name));
    previous = next.catch(() => undefined);
    return next;
  };
  return prefetched('pass', oneAtATime, log);
}
