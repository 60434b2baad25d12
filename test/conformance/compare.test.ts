// The oracle's golden cases, as part of npm test: the API runs as a real process on a fresh
// copy of the fixture (with the oracle's configuration, so /forceschedulers matches), and
// ../shared/oracle/compare.mjs replays every case against it, mutating ones included (they
// run last, and this copy is thrown away afterwards).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { ORACLE } from '../helpers/psql.js';
import { fixtureApi } from './fixture-api.js';

const run = promisify(execFile);

const base = fixtureApi();

it('every golden case of the oracle passes', async () => {
  const cases = `${ORACLE}/cases.json`;
  let stdout: string;
  let code = 0;
  try {
    ({ stdout } = await run(process.execPath, [`${ORACLE}/compare.mjs`, '--base', base(), '--cases', cases], {
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
    }));
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    code = typeof e.code === 'number' ? e.code : -1;
    stdout = `${e.stdout ?? ''}${e.stderr ?? ''}`;
  }
  const failures = stdout.split('\n').filter((l) => l.startsWith('FAIL '));
  expect(failures, 'failing cases').toEqual([]);
  const summary = stdout.trim().split('\n').at(-1) ?? '';
  expect(summary).toMatch(/^\d+ passed, 0 failed$/);
  // Every case ran: the tool counts as many as the file holds.
  const { length } = JSON.parse(readFileSync(cases, 'utf8')) as unknown[];
  expect(Number(summary.split(' ')[0])).toBe(length);
  expect(code).toBe(0);
}, 180_000);
