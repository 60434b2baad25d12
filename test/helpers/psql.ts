// Load SQL files with psql, as the oracle's README does: fixture.sql is plain SQL with COPY
// blocks, which only psql reads.
import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SHARED = resolve(dirname(fileURLToPath(import.meta.url)), '../../../shared');
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
