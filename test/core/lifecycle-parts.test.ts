// The composition roots' lifecycle (core/lifecycle/parts.ts), as pure logic: the order parts
// start and stop in, what a failed start stops, and what its error says.
import { describe, expect, it } from 'vitest';
import type { LogLevel } from '../../services/core/config/env.js';
import { type Part, PartStartError, Parts } from '../../services/core/lifecycle/parts.js';
import { createLogger } from '../../services/core/telemetry/logger.js';

/** A logger whose lines are kept, to see what a failed stop logged. */
function recordingLog(level: LogLevel = 'error'): {
  log: ReturnType<typeof createLogger>;
  lines: Record<string, unknown>[];
} {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger('test', level, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

/** Parts that write what happens to them into `events`. */
function tracked(events: string[], name: string, opts: { failStart?: boolean; failStop?: boolean } = {}) {
  return {
    name,
    start: async () => {
      events.push(`start ${name}`);
      if (opts.failStart) throw new Error(`${name} broke`);
      return { name };
    },
    stop: async (h: { name: string }) => {
      events.push(`stop ${h.name}`);
      if (opts.failStop) throw new Error(`${name} would not stop`);
    },
  } satisfies Part<{ name: string }>;
}

describe('Parts', () => {
  it('starts in order, hands each start’s result back, and stops in reverse', async () => {
    const events: string[] = [];
    const parts = new Parts({ log: recordingLog().log });
    const a = await parts.start(tracked(events, 'a'));
    const b = await parts.start(tracked(events, 'b'));
    await parts.start({ name: 'plain', start: () => 42 });
    await parts.complete();
    expect([a.name, b.name]).toEqual(['a', 'b']);
    expect(parts.names()).toEqual(['a', 'b', 'plain']);
    expect(parts.steps().map((s) => s.name)).toEqual(['plain', 'b', 'a']);
    await parts.stop();
    expect(events).toEqual(['start a', 'start b', 'stop b', 'stop a']);
  });

  it('on a failed start, stops what started in reverse and names the part that failed', async () => {
    const events: string[] = [];
    const parts = new Parts({ log: recordingLog().log });
    await parts.start(tracked(events, 'a'));
    await parts.start(tracked(events, 'b'));
    const failed = await parts.start(tracked(events, 'c', { failStart: true })).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(PartStartError);
    expect((failed as PartStartError).part).toBe('c');
    expect((failed as Error).message).toBe('c did not start: c broke');
    expect(((failed as Error).cause as Error).message).toBe('c broke');
    expect(events).toEqual(['start a', 'start b', 'start c', 'stop b', 'stop a']);
    // Nothing starts on parts that have stopped.
    await expect(parts.start(tracked(events, 'd'))).rejects.toThrow(
      /d did not start: the parts are stopping/,
    );
    expect(events).not.toContain('start d');
  });

  it('a stop that fails is logged, the others still stop, and the start’s error is the one thrown', async () => {
    const events: string[] = [];
    const { log, lines } = recordingLog();
    const parts = new Parts({ log });
    await parts.start(tracked(events, 'a'));
    await parts.start(tracked(events, 'b', { failStop: true }));
    await expect(parts.start(tracked(events, 'c', { failStart: true }))).rejects.toThrow(
      'c did not start: c broke',
    );
    expect(events).toEqual(['start a', 'start b', 'start c', 'stop b', 'stop a']);
    expect(lines.map((l) => [l.part, l.msg])).toEqual([['b', 'stop failed']]);
  });

  it('stop() runs every stop, then rejects with the first failure; each part stops once', async () => {
    const events: string[] = [];
    const parts = new Parts({ log: recordingLog().log });
    await parts.start(tracked(events, 'a', { failStop: true }));
    await parts.start(tracked(events, 'b', { failStop: true }));
    await parts.start(tracked(events, 'c'));
    // A process's shutdown may run the steps one by one, and stop() after them.
    await parts.steps()[0]!.run();
    await expect(parts.stop()).rejects.toThrow('b would not stop');
    await expect(parts.stop()).rejects.toThrow('b would not stop');
    expect(events).toEqual(['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
  });

  it('failAt fails right after the named part started, so its stop runs too', async () => {
    const events: string[] = [];
    const parts = new Parts({ log: recordingLog().log, failAt: 'b' });
    await parts.start(tracked(events, 'a'));
    await expect(parts.start(tracked(events, 'b'))).rejects.toThrow(/^b did not start: failAt: b/);
    expect(events).toEqual(['start a', 'start b', 'stop b', 'stop a']);
  });

  it('a failAt that names no part fails complete(), after stopping everything', async () => {
    const events: string[] = [];
    const parts = new Parts({ log: recordingLog().log, failAt: 'typo' });
    await parts.start(tracked(events, 'a'));
    await expect(parts.complete()).rejects.toThrow('failAt: no part is named "typo" (a)');
    expect(events).toEqual(['start a', 'stop a']);
  });

  it('logs each start at debug with how long it took: a start’s timeline', async () => {
    const { log, lines } = recordingLog('debug');
    const parts = new Parts({ log });
    await parts.start(tracked([], 'a'));
    await parts.startBehind(tracked([], 'b'));
    const started = lines.filter((l) => l.msg === 'part started');
    expect(started.map((l) => l.part)).toEqual(['a', 'b']);
    for (const l of started) {
      expect(l.ms).toBeGreaterThanOrEqual(0);
      expect(l.processCpuMs).toBeGreaterThan(0);
      expect(l.processMs).toBeGreaterThanOrEqual(l.ms as number);
    }
  });

  describe('a part started behind (startBehind)', () => {
    /** A part whose start ends when the test says so. */
    function held(events: string[], name: string) {
      let release!: (ok: boolean) => void;
      const ended = new Promise<boolean>((r) => {
        release = r;
      });
      const part = {
        name,
        start: async () => {
          events.push(`start ${name}`);
          if (!(await ended)) throw new Error(`${name} broke`);
          events.push(`started ${name}`);
          return { name };
        },
        stop: async (h: { name: string }) => void events.push(`stop ${h.name}`),
      } satisfies Part<{ name: string }>;
      return { part, release };
    }

    /** Parts a, b (started behind, held) and c, started. */
    async function aBehindBc() {
      const events: string[] = [];
      const parts = new Parts({ log: recordingLog().log });
      await parts.start(tracked(events, 'a'));
      const b = held(events, 'b');
      const handle = parts.startBehind(b.part);
      await parts.start(tracked(events, 'c'));
      return { events, parts, b, handle };
    }

    it('starts while the next parts start, keeps its place in the stop order, and complete() waits for it', async () => {
      const { events, parts, b, handle } = await aBehindBc();
      let completed = false;
      const completing = parts.complete().then(() => {
        completed = true;
      });
      await new Promise((r) => setImmediate(r));
      expect(completed).toBe(false);
      b.release(true);
      await completing;
      expect((await handle).name).toBe('b');
      expect(parts.names()).toEqual(['a', 'b', 'c']);
      await parts.stop();
      expect(events).toEqual(['start a', 'start b', 'start c', 'started b', 'stop c', 'stop b', 'stop a']);
    });

    it('a failed start fails complete() with its name, once every part has stopped', async () => {
      const { events, parts, b, handle } = await aBehindBc();
      b.release(false);
      const failed = await parts.complete().catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(PartStartError);
      expect((failed as Error).message).toBe('b did not start: b broke');
      await expect(handle).rejects.toThrow('b did not start: b broke');
      expect(events).toEqual(['start a', 'start b', 'start c', 'stop c', 'stop a']);
    });

    it('a stop while it is starting waits for its start, then stops it', async () => {
      const events: string[] = [];
      const parts = new Parts({ log: recordingLog().log });
      const b = held(events, 'b');
      void parts.startBehind(b.part);
      const failing = parts.start(tracked(events, 'c', { failStart: true }));
      let failed = false;
      void failing.catch(() => {
        failed = true;
      });
      await new Promise((r) => setImmediate(r));
      // c's failed start is stopping the parts, and waits for b's start before stopping it.
      expect(failed).toBe(false);
      expect(events).toEqual(['start b', 'start c']);
      b.release(true);
      await expect(failing).rejects.toThrow('c did not start: c broke');
      expect(events).toEqual(['start b', 'start c', 'started b', 'stop b']);
    });

    it('failAt fails it once it has started, and its stop runs too', async () => {
      const events: string[] = [];
      const parts = new Parts({ log: recordingLog().log, failAt: 'b' });
      await parts.start(tracked(events, 'a'));
      await expect(parts.startBehind(tracked(events, 'b'))).rejects.toThrow(/^b did not start: failAt: b/);
      await expect(parts.complete()).rejects.toThrow(/^b did not start: failAt: b/);
      expect(events).toEqual(['start a', 'start b', 'stop b', 'stop a']);
    });
  });
});
