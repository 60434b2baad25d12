// A hook's secret (the GitHub HMAC secret, the base hook's password), read once at start from
// where the configuration says: an environment variable or a file (a mounted Secret). One
// that is unset, empty or unreadable is a configuration error: the API does not start.
import { readFileSync } from 'node:fs';
import { ConfigError } from '../../core/config/errors.js';

/**
 * The secret `key` (a configuration path, for the message) names by `fromEnv` or `fromFile`;
 * null when it names neither.
 */
export function hookSecret(
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
