// Load SQL files with psql: the recorded fixture (test/fixtures/buildbot-3.7/fixture.sql) is
// plain SQL with COPY ... FROM stdin blocks, which only psql reads.
import { execFileSync } from 'node:child_process';

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
