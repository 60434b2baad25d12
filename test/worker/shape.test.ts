// A Flotilla agent's side of a step's shape, over the real protocol: logfiles followed while
// the command runs (not read after it), only once changed since the start, and with
// `follow` only what was added; interrupts with Buildbot's interruptSignal and sigtermTime.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OutputStream } from '../../services/core/protocol/messages.js';
import type { FlotillaConnection } from '../../services/master/workers/flotilla/connection.js';
import { runCommand } from '../../services/worker/command.js';
import { waitFor } from '../helpers/wait.js';
import { collect } from './collect.js';
import { connectAgent, type Pair } from './pair.js';

const dir = mkdtempSync(join(tmpdir(), 'flotilla-shape-'));
let pair: Pair;
let w: FlotillaConnection;

beforeAll(async () => {
  pair = await connectAgent(dir);
  w = pair.conn;
});
afterAll(async () => {
  await pair?.close();
  rmSync(dir, { recursive: true, force: true });
});

function store() {
  const parts: { stream: OutputStream; text: string; log?: string }[] = [];
  return {
    sink: async (stream: OutputStream, text: string, log?: string) => {
      parts.push({ stream, text, ...(log !== undefined ? { log } : {}) });
    },
    of: (log: string) =>
      parts
        .filter((p) => p.log === log)
        .map((p) => p.text)
        .join(''),
  };
}

describe('logfiles', () => {
  it('are followed while the command runs', async () => {
    const work = join(dir, 'follow');
    const out = store();
    const running = w.run(
      {
        command: "printf 'one\\n' >> a.txt; while [ ! -e go ]; do sleep 0.02; done; printf 'two\\n' >> a.txt",
        workdir: 'follow',
        logfiles: { 'a.log': { filename: 'a.txt', follow: false } },
      },
      out.sink,
    );
    // The command waits for `go`, which the test writes only once the first line has come.
    await waitFor('the first line of a.txt', () => out.of('a.log') === 'one\n');
    writeFileSync(join(work, 'go'), '');
    expect(await running).toMatchObject({ rc: 0 });
    expect(out.of('a.log')).toBe('one\ntwo\n');
  });

  it('a file left from before is sent only if written to; with follow, only what was added', async () => {
    const work = join(dir, 'old');
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, 'stale.txt'), 'stale\n');
    writeFileSync(join(work, 'grows.txt'), 'before\n');
    writeFileSync(join(work, 'whole.txt'), 'before\n');
    const out = store();
    const end = await w.run(
      {
        command: "sleep 0.05; printf 'after\\n' >> grows.txt; printf 'after\\n' >> whole.txt",
        workdir: 'old',
        logfiles: {
          stale: { filename: 'stale.txt', follow: false },
          grows: { filename: 'grows.txt', follow: true },
          whole: { filename: 'whole.txt', follow: false },
          missing: { filename: 'nothing-here.txt', follow: false },
          outside: { filename: '../../../etc/passwd', follow: false },
        },
      },
      out.sink,
    );
    expect(end).toMatchObject({ rc: 0 });
    expect(out.of('stale')).toBe('');
    expect(out.of('grows')).toBe('after\n');
    expect(out.of('whole')).toBe('before\nafter\n');
    expect(out.of('missing')).toBe('');
    expect(out.of('outside')).toBe('');
  });
});

describe('interrupting', () => {
  const trapping = (sig: string) =>
    `trap 'echo got ${sig}; exit 7' ${sig}; touch ready; while :; do sleep 0.02; done`;

  it('sends interruptSignal', async () => {
    const work = join(dir, 'int');
    const out = collect();
    const r = runCommand({ command: trapping('INT'), workdir: work, interruptSignal: 'INT' }, out.on);
    await waitFor('the trap to be set', () => existsSync(join(work, 'ready')));
    r.interrupt('test');
    expect(await r.result).toMatchObject({ rc: 7, interrupted: true });
    expect(out.text('o')).toBe('got INT\n');
  });

  it('with sigtermTime, SIGTERM first and interruptSignal only if still running after it', async () => {
    const work = join(dir, 'term');
    const out = collect();
    const r = runCommand({ command: trapping('TERM'), workdir: work, sigtermTime: 30 }, out.on);
    await waitFor('the trap to be set', () => existsSync(join(work, 'ready')));
    r.interrupt('test');
    // It ended on SIGTERM (its trap's exit code), not on the default SIGKILL.
    expect(await r.result).toMatchObject({ rc: 7, signal: null, interrupted: true });
    expect(out.text('o')).toBe('got TERM\n');
  });

  it('without sigtermTime, interruptSignal (KILL by default) at once', async () => {
    const work = join(dir, 'kill');
    const out = collect();
    const r = runCommand({ command: trapping('TERM'), workdir: work }, out.on);
    await waitFor('the trap to be set', () => existsSync(join(work, 'ready')));
    r.interrupt('test');
    expect(await r.result).toMatchObject({ rc: null, signal: 'SIGKILL', interrupted: true });
    expect(out.text('o')).toBe('');
  });
});
