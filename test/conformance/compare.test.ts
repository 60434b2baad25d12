// The oracle's golden cases, as part of npm test: the API runs as a real process on a fresh
// copy of the fixture (with the oracle's configuration, so /forceschedulers matches), and
// ../shared/oracle/compare.mjs replays every case against it, mutating ones included (they
// run last, and this copy is thrown away afterwards).
//
// A few cases record an answer that a later decision changed on purpose; they are left out
// of the replay, each with its reason (docs/compatibility.md), and the new answer is checked
// where the decision was made.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { ORACLE } from '../helpers/psql.js';
import { fixtureApi } from './fixture-api.js';

const run = promisify(execFile);

const base = fixtureApi();

const OVERRULED: Record<string, string> = {
  'jsonrpc/unknown-method-forcescheduler':
    'Buildbot answers 200 `result: null`; Flotilla -32601 like every other path (test/api/auth/force.test.ts)',
  'jsonrpc/force-builder-not-handled':
    'a builder that is not the scheduler\'s: 400 in Buildbot\'s -32602 shape, not {"error"} (test/api/auth/force.test.ts)',
};

it('every golden case of the oracle passes', async () => {
  const cases = `${ORACLE}/cases.json`;
  const ids = (JSON.parse(readFileSync(cases, 'utf8')) as { id: string }[]).map((c) => c.id);
  for (const id of Object.keys(OVERRULED))
    expect(ids, 'an overruled case that no longer exists').toContain(id);
  const asked = ids.filter((id) => !(id in OVERRULED));
  let stdout: string;
  let code = 0;
  try {
    ({ stdout } = await run(
      process.execPath,
      [`${ORACLE}/compare.mjs`, '--base', base(), '--cases', cases, '--only', asked.join(',')],
      { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
    ));
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    code = typeof e.code === 'number' ? e.code : -1;
    stdout = `${e.stdout ?? ''}${e.stderr ?? ''}`;
  }
  const failures = stdout.split('\n').filter((l) => l.startsWith('FAIL '));
  expect(failures, 'failing cases').toEqual([]);
  const summary = stdout.trim().split('\n').at(-1) ?? '';
  expect(summary).toMatch(/^\d+ passed, 0 failed$/);
  // Every case but the overruled ones ran.
  expect(Number(summary.split(' ')[0])).toBe(asked.length);
  expect(code).toBe(0);
}, 180_000);
