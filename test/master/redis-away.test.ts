// Redis is a cache of liveness, not of duties (issue 15): while the master's Redis is frozen
// (SIGSTOP of the redis-server this test started: connections stay open and nothing answers,
// the hardest case, since a command waits for ever rather than failing), a build runs to its
// end, every line of its output acknowledged to the worker and stored. Once Redis answers
// again, the build's events reach it in the order they were committed.
// In-process master and scripted worker, on a real PostgreSQL and a private Redis.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { EVENTS_STREAM, parseBusMessage } from '../../services/core/events/bus.js';
import { Results } from '../../services/core/results.js';
import { waitFor } from '../helpers/wait.js';
import { request } from './builds/lib.js';
import { type Script, ScriptedWorker, Stage } from './in-process.js';

const CONFIG = `
log_compression: none
workers:
  - { name: w1, password: x, max_builds: 1 }
builders:
  - name: counting
    workers: [w1]
    steps:
      - { type: shell, name: count, command: "count" }
      - { type: shell, name: after, command: "after" }
`;

const LINES = 200;

let stage: Stage;
let frozen = false;
const thaw = () => {
  if (frozen) process.kill(stage.redis.proc.pid, 'SIGCONT');
  frozen = false;
};

beforeAll(async () => {
  stage = await Stage.open();
}, 60_000);
afterAll(async () => {
  // Whatever happened, Redis answers again before the master is stopped and Redis killed.
  if (stage) thaw();
  await stage?.close();
});

/** The state letter of a process (T: stopped), from /proc. */
const processState = (pid: number): string => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0]!;

describe('a build while its master cannot reach Redis', () => {
  it('runs to its end with every line acknowledged and stored; its events follow in commit order once Redis is back', async () => {
    // The first command writes a line, then waits until Redis is frozen, then writes the rest,
    // each piece only once the master acknowledged the one before (as a worker's window of one).
    let release!: () => void;
    const frozenNow = new Promise<void>((resolve) => {
      release = resolve;
    });
    const progress = { started: false, acknowledged: 0 };
    const script: Script = async (cmd) => {
      if (cmd.text === 'after') {
        await cmd.write('o', 'after\n');
        return { rc: 0 };
      }
      await cmd.write('o', 'line 1\n');
      progress.acknowledged = 1;
      progress.started = true;
      await frozenNow;
      for (let n = 2; n <= LINES; n++) {
        await cmd.write('o', `line ${n}\n`);
        progress.acknowledged = n;
      }
      return { rc: 0 };
    };
    const m = await stage.master('redis-away', CONFIG);
    try {
      m.workers.connect(new ScriptedWorker('w1', script));
      const { brid } = await request(stage, 'counting');
      await waitFor('the command to start', () => progress.started);

      process.kill(stage.redis.proc.pid, 'SIGSTOP');
      frozen = true;
      release();

      // The whole build, its second step included, ends while Redis is still frozen.
      await waitFor(
        'the build to finish',
        async () => {
          const [b] = await stage.db.pool.query(
            sql`SELECT results FROM builds WHERE buildrequestid = ${brid} AND results IS NOT NULL`,
          );
          return b !== undefined;
        },
        { timeoutMs: 90_000 },
      );
      expect(processState(stage.redis.proc.pid)).toBe('T');
      expect(progress.acknowledged).toBe(LINES);
      const [build] = await stage.db.pool.query(
        sql`SELECT id, results FROM builds WHERE buildrequestid = ${brid}`,
      );
      expect(build.results).toBe(Results.SUCCESS);
      const stored = await stage.db.pool.query(sql`
        SELECT s.name, string_agg(convert_from(c.content, 'UTF8'), E'\\n' ORDER BY c.first_line) AS text
        FROM steps s JOIN logs l ON l.stepid = s.id JOIN logchunks c ON c.logid = l.id
        WHERE s.buildid = ${build.id} AND l.name = 'stdio' GROUP BY s.name`);
      const text = Object.fromEntries(stored.map((r) => [r.name, r.text as string]));
      const lines = text.count!.split('\n').filter((l: string) => l.startsWith('o'));
      expect(lines).toEqual(Array.from({ length: LINES }, (_, i) => `oline ${i + 1}`));
      expect(text.after!.split('\n')).toContain('oafter');
      const [{ complete }] = await stage.db.pool.query(
        sql`SELECT complete FROM buildrequests WHERE id = ${brid}`,
      );
      expect(complete).toBe(1);

      thaw();

      // Every event of the build reaches Redis, the last one (the build's finished) included.
      const buildKey = `builds/${build.id}/`;
      let events: { k: string; m: Record<string, unknown> }[] = [];
      await waitFor(
        "the build's events to reach Redis",
        async () => {
          const entries = await stage.ctx.redis.xrange(EVENTS_STREAM, '-', '+');
          events = entries.map(([, fields]) => {
            const msg = parseBusMessage(fields[1]!)!;
            return { k: msg.k, m: msg.m as Record<string, unknown> };
          });
          return events.some((e) => e.k === `${buildKey}finished`);
        },
        { timeoutMs: 90_000 },
      );
      // In commit order: the build's new first and finished last of its own events; each
      // step new, started, finished; each log's line count never going back.
      const own = events.filter((e) => e.k.startsWith(buildKey) && e.k.split('/').length === 3);
      expect(own[0]!.k).toBe(`${buildKey}new`);
      expect(own.at(-1)!.k).toBe(`${buildKey}finished`);
      const steps = events.filter((e) => /^steps\/\d+\/(new|started|finished)$/.test(e.k));
      const stepids = [...new Set(steps.map((e) => e.k.split('/')[1]))];
      // worker_preparation, count and after.
      expect(stepids).toHaveLength(3);
      for (const id of stepids) {
        expect(steps.filter((e) => e.k.split('/')[1] === id).map((e) => e.k.split('/')[2])).toEqual([
          'new',
          'started',
          'finished',
        ]);
      }
      const finishedAt = events.findIndex((e) => e.k === `${buildKey}finished`);
      const lastStep = events.findLastIndex((e) => /^steps\/\d+\//.test(e.k) && e.k.split('/').length === 3);
      expect(lastStep).toBeLessThan(finishedAt);
      const logCounts = events
        .filter((e) => /^logs\/\d+\/\w+$/.test(e.k) && typeof e.m.num_lines === 'number')
        .reduce<Record<string, number[]>>((acc, e) => {
          const id = e.k.split('/')[1]!;
          acc[id] = [...(acc[id] ?? []), e.m.num_lines as number];
          return acc;
        }, {});
      const counts = Object.values(logCounts);
      expect(counts.length).toBeGreaterThan(0);
      for (const c of counts) expect(c).toEqual([...c].sort((a, b) => a - b));
      expect(Math.max(...counts.flat())).toBe(LINES);
    } finally {
      thaw();
      await m.stop();
    }
  });
});
