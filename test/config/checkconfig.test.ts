// `npm run checkconfig -- master.yaml` as a process (Buildbot's `buildbot checkconfig`): it
// loads the file with the master's checks and starts nothing (no database or Redis is given to
// it here). Exit 0 and one summary line when the file loads; exit 1 and every problem with the
// path of its key otherwise; a missing file is said to be missing.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { start } from '../helpers/processes.js';
import { serviceCommand } from '../helpers/service-build.js';

const dir = mkdtempSync(join(tmpdir(), 'checkconfig-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function checkconfig(
  ...args: string[]
): Promise<{ code: number | string; stdout: string; stderr: string }> {
  // DATABASE_URL and REDIS_URL point nowhere: checkconfig must not need them.
  const p = start(process.execPath, [...serviceCommand('services/master/checkconfig.ts'), ...args], {
    DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/none',
    REDIS_URL: 'redis://127.0.0.1:1',
  });
  let stdout = '';
  let stderr = '';
  p.child.stdout!.on('data', (d) => {
    stdout += d;
  });
  p.child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const code = await p.exited;
  return { code, stdout, stderr };
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('npm run checkconfig', () => {
  it('exits 0 with a one-line summary when the file loads', async () => {
    const r = await checkconfig('deploy/example/master.yaml');
    expect(r).toEqual({
      code: 0,
      stdout:
        'deploy/example/master.yaml: ok: 2 builders, 1 worker, 3 schedulers (2 force), 2 reporters, 1 change source\n',
      stderr: '',
    });
  });

  it('names the keys Flotilla ignores on stderr and still exits 0', async () => {
    const path = file('ignored.yaml', 'buildbotNetUsageData: null\nwww: { port: 8010 }\n');
    const r = await checkconfig(path);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `${path}: ok: 0 builders, 0 workers, 0 schedulers (0 force), 0 reporters, 0 change sources\n`,
    );
    expect(r.stderr.trim().split('\n')).toEqual([
      'warning: buildbotNetUsageData is ignored: Flotilla sends no usage data anywhere',
      "warning: www.port is ignored: the API pods listen where their environment says (PORT), not where the master's file says",
    ]);
  });

  const W1 = 'workers: [{ name: w1, password: p }]\n';

  /** checkconfig on `yaml` written as `name`: it must exit 1 with nothing on stdout; its stderr. */
  async function refused(name: string, yaml: string): Promise<string> {
    const r = await checkconfig(file(name, W1 + yaml));
    expect([r.code, r.stdout]).toEqual([1, '']);
    return r.stderr;
  }

  it('exits 1 with every problem and its key path when the file does not load', async () => {
    const bad = await refused(
      'bad.yaml',
      'builders: [{ name: b1, workers: [w1], steps: [{ type: shel, command: x }] }]',
    );
    expect(bad).toContain(`CONFIG_SCHEMA: ${join(dir, 'bad.yaml')} is invalid`);
    expect(bad).toContain('builders[0].steps[0].type: expected type to be one of shell,');
    expect(await refused('refs.yaml', 'builders: [{ name: b1, workers: [w2] }]')).toContain(
      'builders[0].workers[0]: no worker named "w2"',
    );
    // The master's own checks beyond the schema run too: a cron field out of range.
    const cron = 'schedulers: [{ type: nightly, name: n, cron: "61 0 * * *", builders: [b1] }]';
    expect(await refused('cron.yaml', `builders: [{ name: b1, workers: [w1] }]\n${cron}`)).toContain(
      'schedulers[0].cron: 61 0 * * *: minute 61 is out of range 0-59',
    );
  });

  it('says a missing file is missing, and how to call it without one', async () => {
    const missing = join(dir, 'nope.yaml');
    const r = await checkconfig(missing);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `CONFIG_FILE_UNREADABLE: cannot read ${missing}: ENOENT: no such file or directory, open '${missing}'\n`,
    );
    const usage = await checkconfig();
    expect(usage).toEqual({
      code: 1,
      stdout: '',
      stderr: 'usage: npm run checkconfig -- path/to/master.yaml\n',
    });
  });
});
