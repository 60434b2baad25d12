// Load SQL files with psql, as the oracle's README does: fixture.sql is plain SQL with COPY
// blocks, which only psql reads.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The shared folder (contract, oracle, fixture): FLOTILLA_SHARED if set, else `shared`
 * beside the repository, else where it lives on the development machine (a CI clone may
 * sit anywhere).
 */
function findShared(): string {
  const candidates = [process.env.FLOTILLA_SHARED, resolve(ROOT, '../shared'), '/work/shared'];
  for (const c of candidates) if (c && existsSync(`${c}/oracle/fixture.sql`)) return c;
  throw new Error(
    `the shared folder (oracle, fixture) was not found; set FLOTILLA_SHARED (tried ${candidates.join(', ')})`,
  );
}

export const SHARED = findShared();
export const ORACLE = `${SHARED}/oracle`;

export function psqlFile(url: string, file: string): void {
  execFileSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', file, url], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, PGOPTIONS: '-c client_min_messages=warning' },
  });
}

export function psqlCommand(url: string, command: string): string {
  return execFileSync('psql', ['-X', '-qAt', '-v', 'ON_ERROR_STOP=1', '-c', command, url], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
