// The worker runs real commands: shell strings and argv lists, in a work directory, with an
// environment, streaming output; timeouts and interrupts kill the whole process group.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../services/worker/command.js';
import { waitFor } from '../helpers/wait.js';
import { collect } from './collect.js';

const dir = mkdtempSync(join(tmpdir(), 'flotilla-cmd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A killed process whose parent died may linger as a zombie until reaped: that is dead too.
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
};

describe('runCommand', () => {
  it('runs a shell string in its work directory, with its environment', async () => {
    const out = collect();
    const r = await runCommand(
      {
        command: 'echo "$GREETING from $(basename "$PWD")"; echo oops >&2; exit 3',
        workdir: join(dir, 'w1'),
        env: { GREETING: 'héllo' },
      },
      out.on,
    ).result;
    expect(r).toMatchObject({ rc: 3, signal: null, interrupted: false, timedOut: false });
    expect(out.text('o')).toBe('héllo from w1\n');
    expect(out.text('e')).toBe('oops\n');
    const header = out.text('h');
    expect(header).toMatch(
      /^echo "\$GREETING[^\n]*\n in dir .*w1 \(timeout 1200 secs\)\n watching logfiles \{\}\n argv: b'/,
    );
    expect(header).toMatch(/\n {2}GREETING=héllo\n/);
    expect(header).toMatch(/program finished with exit code 3\nelapsedTime=\d+\.\d{6}\n$/);
  });

  it('runs an argv list without a shell', async () => {
    const out = collect();
    const r = await runCommand({ command: ['printf', '%s|', 'a b', '$HOME'], workdir: dir }, out.on).result;
    expect(r.rc).toBe(0);
    expect(out.text('o')).toBe('a b|$HOME|');
    expect(out.text('h')).toMatch(/ argv: \['printf', '%s\|', 'a b', '\$HOME'\]/);
  });

  it("never passes the agent's own variables to a build, nor shows them in its log", async () => {
    const own = {
      WORKER_NAME: 'w-secret',
      MASTER_URL: 'ws://m-secret',
      OTEL_X: 'o-secret',
      // Not a bare number: the host's own variables hold pids and ports (CI once ran with
      // TEST_PG_SOCKET_DIR=.data/test-4242), and a secret must match only itself.
      PROBE_PORT: 'port-secret-4242',
    };
    Object.assign(process.env, own, { BUILD_VISIBLE: 'host-value' });
    const out = collect();
    try {
      await runCommand({ command: 'env', workdir: dir }, out.on).result;
    } finally {
      // Later files in this process see the environment as it was.
      for (const k of [...Object.keys(own), 'BUILD_VISIBLE']) delete process.env[k];
    }
    const all = out.text('o') + out.text('h');
    for (const v of Object.values(own)) expect(all).not.toContain(v);
    // The host's other variables are the step's, shown in the header as Buildbot shows them.
    expect(out.text('o')).toContain('BUILD_VISIBLE=host-value');
    expect(out.text('h')).toContain('  BUILD_VISIBLE=host-value');
  });

  it('kills the whole process group on interrupt', async () => {
    const out = collect();
    const running = runCommand({ command: 'sleep 30 & echo "child $!"; wait', workdir: dir }, out.on);
    await waitFor('the child to start', () => /child \d+/.test(out.text('o')));
    const childPid = Number(/child (\d+)/.exec(out.text('o'))![1]);
    expect(alive(childPid)).toBe(true);
    running.interrupt('stopped by a test');
    const r = await running.result;
    expect(r.interrupted).toBe(true);
    expect(r.signal).toBe('SIGKILL');
    expect(out.text('h')).toMatch(/killing command: stopped by a test/);
    await waitFor('the child to die', () => !alive(childPid));
  });

  it('times out a silent command', async () => {
    const out = collect();
    const r = await runCommand({ command: 'echo start; sleep 20', workdir: dir, timeout: 0.5 }, out.on)
      .result;
    expect(r.timedOut).toBe(true);
    // Killed: the command would have run 20 s.
    expect(r.elapsedSeconds).toBeLessThan(20);
    expect(out.text('h')).toMatch(/command timed out: 0.5 seconds without output/);
  });

  it('streams large output completely', async () => {
    const out = collect();
    const r = await runCommand({ command: 'seq 1 200000', workdir: dir }, out.on).result;
    expect(r.rc).toBe(0);
    const lines = out.text('o').split('\n');
    expect(lines).toHaveLength(200001);
    expect(lines[199999]).toBe('200000');
  });

  it('reports a program that cannot start', async () => {
    const out = collect();
    const r = await runCommand({ command: ['/nonexistent/program'], workdir: dir }, out.on).result;
    expect(r.rc).toBe(-1);
    expect(out.text('h')).toMatch(/error starting command: spawn \/nonexistent\/program ENOENT/);
  });
});
