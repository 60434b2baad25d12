// A master refuses to start when its timings could let one build request run twice at once
// (issue 15, services/master/liveness.ts): it says which setting is wrong and what value would
// do, exits 2, and touches nothing in the database. The values it names are then accepted, so
// the advice in the refusal is the rule itself, not a guess.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { freePort, type Running, startRedis, startService, status } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

let db: TestDatabase;
let redis: Awaited<ReturnType<typeof startRedis>>;
let dir: string;
const running: Running[] = [];

beforeAll(async () => {
  db = await createDatabase('migrated');
  redis = await startRedis();
  dir = mkdtempSync(join(tmpdir(), 'flotilla-timings-'));
});
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop('SIGKILL')));
  await redis?.proc.stop('SIGKILL');
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function config(name: string, timings: Record<string, number>): string {
  const file = join(dir, `${name}.yaml`);
  const lines = Object.entries(timings).map(([k, v]) => `${k}: ${v}`);
  writeFileSync(file, ['title: timings', ...lines, ''].join('\n'));
  return file;
}

async function startMaster(name: string, file: string): Promise<{ master: Running; probe: number }> {
  const probe = await freePort();
  const master = startService('master', {
    DATABASE_URL: db.url,
    REDIS_URL: redis.url,
    MASTER_CONFIG: file,
    MASTER_NAME: name,
    PROBE_PORT: String(probe),
    WORKER_PORT: String(await freePort()),
  });
  running.push(master);
  return { master, probe };
}

/** The problems of the master's fatal log line (pino JSON). */
function refusal(output: string): string[] {
  const line = output.split('\n').find((l) => l.includes('"level":60'));
  expect(line, output).toBeDefined();
  return (JSON.parse(line!) as { problems: string[] }).problems;
}

async function registered(name: string): Promise<number> {
  const [row] = await db.pool.query(sql`SELECT count(*)::int AS n FROM masters WHERE name = ${name}`);
  return (row as { n: number }).n;
}

/** The value a problem says would do ("... at most 4.8 s"). */
function atMost(problem: string): number {
  const m = /at most ([0-9.]+) s$/.exec(problem);
  expect(m, problem).not.toBeNull();
  return Number(m![1]);
}

describe('a master whose timings could run a request twice', () => {
  it('refuses to start, naming each setting and the most it may be, and registers nothing', async () => {
    // E = 10 s: a heartbeat every 2.5 s. A 20 s silence lets a frozen master's commands outlive
    // its expiry; a 30 s outage lets its builds run on after it.
    const file = config('unsafe', {
      master_expiry_seconds: 10,
      worker_silence_seconds: 20,
      database_outage_seconds: 30,
    });
    const { master } = await startMaster('unsafe', file);
    expect(await master.exited).toBe(2);
    const problems = refusal(master.output());
    expect(problems).toHaveLength(2);
    const [silence, outage] = [
      problems.find((p) => p.startsWith('worker_silence_seconds:')),
      problems.find((p) => p.startsWith('database_outage_seconds:')),
    ];
    expect(silence).toMatch(/master_expiry_seconds 10 s/);
    expect(outage).toMatch(/master_expiry_seconds 10 s/);
    expect(await registered('unsafe')).toBe(0);

    // The values named are the largest the rules allow: a little more is refused, and a
    // master with them starts.
    const over = config('over', {
      master_expiry_seconds: 10,
      worker_silence_seconds: atMost(silence!) + 0.1,
      database_outage_seconds: atMost(outage!) + 0.1,
    });
    const refused = await startMaster('over', over);
    expect(await refused.master.exited).toBe(2);
    expect(refusal(refused.master.output())).toHaveLength(2);
    const safe = config('safe', {
      master_expiry_seconds: 10,
      worker_silence_seconds: atMost(silence!),
      database_outage_seconds: atMost(outage!),
    });
    const ok = await startMaster('safe', safe);
    await waitFor(
      'the master with the named values ready',
      async () => (await status(`http://127.0.0.1:${ok.probe}/readyz`)) === 200,
      { proc: ok.master },
    );
    expect(await registered('safe')).toBe(1);
    expect(await ok.master.stop('SIGTERM')).toBe(0);
  });

  it('refuses an outage limit no longer than a heartbeat period, which would end builds for nothing', async () => {
    const file = config('short-outage', { master_expiry_seconds: 10, database_outage_seconds: 3 });
    const { master } = await startMaster('short-outage', file);
    expect(await master.exited).toBe(2);
    const problems = refusal(master.output());
    expect(problems).toEqual([
      expect.stringMatching(/^database_outage_seconds: 3 s is not longer than a heartbeat/),
    ]);
    expect(await registered('short-outage')).toBe(0);
  });
});
