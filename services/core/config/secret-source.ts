// A secret the configuration names by where it lives, never by value (a hook's secret or token,
// the base hook's password, a Vault token, a gpg passphrase, an OAuth2 client secret): an
// environment variable or a file (a mounted Secret), read once at start. One that is unset,
// empty or unreadable is a configuration error: the service does not start.
import { readFileSync } from 'node:fs';
import { ConfigError } from './errors.js';

/**
 * The secret `key` (a configuration path, for the message) names by `fromEnv` or `fromFile`;
 * null when it names neither.
 */
export function readSecret(
  key: string,
  where: { fromEnv?: string | undefined; fromFile?: string | undefined },
  env: Record<string, string | undefined>,
): string | null {
  if (where.fromEnv !== undefined) {
    const secret = env[where.fromEnv] ?? '';
    if (!secret)
      throw new ConfigError('CONFIG_REFERENCE', `${key}: environment variable ${where.fromEnv} is not set`);
    return secret;
  }
  if (where.fromFile === undefined) return null;
  let secret: string;
  try {
    secret = readFileSync(where.fromFile, 'utf8').trim();
  } catch (err) {
    throw new ConfigError(
      'CONFIG_FILE_UNREADABLE',
      `${key}: cannot read ${where.fromFile}: ${(err as Error).message}`,
    );
  }
  if (!secret) throw new ConfigError('CONFIG_REFERENCE', `${key}: ${where.fromFile} is empty`);
  return secret;
}
