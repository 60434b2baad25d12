// Buildbot's PBChangeSource on a Flotilla master (services/master/workers/pb/change-source.ts):
// Debian's own `buildbot sendchange` (a real process) logs in on the master's PB port, the
// workers' port, and its change is stored with every field sendchange carries; a scheduler of
// the master sees it and builds. A prefix keeps only the files under it; a wrong password is
// refused and adds nothing; a field too long is answered with an error the client prints.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMasterConfig } from '../../../../services/core/config/master-config.js';
import { sql } from '../../../../services/core/db/pool.js';
import { listenForWorkers } from '../../../../services/master/workers/listen.js';
import { capturedLog } from '../../../helpers/log-lines.js';
import { freePort, start } from '../../../helpers/processes.js';
import { eventually } from '../../../helpers/wait.js';
import { Stage } from '../../in-process.js';

const captured = capturedLog('info');
let stage: Stage;
let port: number;

const CONFIG = `
protocols: { pb: { port: 0 } }
workers: [{ name: w1, password: pw }]
builders:
  - { name: b1, workers: [w1], steps: [{ type: shell, command: 'true' }] }
change_sources:
  - { type: pb }
  - { type: pb, name: prefixed, user: other, passwd: secret2, prefix: "src/" }
schedulers:
  - { type: single-branch, name: on-main, branch: main, builders: [b1], codebases: { cb: { repository: '' } } }
`;

beforeAll(async () => {
  stage = await Stage.open();
  port = await freePort();
  const log = captured.log;
  await stage.master('m-pb', CONFIG, {
    listenForWorkers: async (events) =>
      listenForWorkers({
        config: parseMasterConfig(CONFIG),
        host: '127.0.0.1',
        workerPort: 0,
        pbPort: port,
        masterName: 'm-pb',
        log,
        events,
        env: {},
      }),
  });
}, 60_000);

afterAll(async () => {
  await stage?.close();
});

/** `buildbot sendchange` against the master's PB port: its exit code and what it printed. */
async function sendchange(args: string[]): Promise<{ code: number | string; output: string }> {
  const p = start('buildbot', ['sendchange', '--master', `127.0.0.1:${port}`, ...args], {});
  const code = await p.exited;
  return { code, output: p.output() };
}

const changesBy = (author: string) =>
  stage.db.pool.query(sql`SELECT * FROM changes WHERE author = ${author} ORDER BY changeid`);

describe('buildbot sendchange', () => {
  it('adds the change with every field it carries, and the scheduler builds it', async () => {
    const r = await sendchange([
      '--auth',
      'change:changepw',
      '--who',
      'alice <a@example.org>',
      '--branch',
      'main',
      '--revision',
      'abc123',
      '--category',
      'cat',
      '--repository',
      'https://git.example.org/r.git',
      '--project',
      'proj',
      '--codebase',
      'cb',
      '--property',
      'flavour:mild',
      '--when',
      '1700000000',
      '--revlink',
      'https://git.example.org/r/abc123',
      '--vc',
      'git',
      '--comments',
      'fix the thing é',
      'src/a.c',
      'doc/b.md',
    ]);
    expect(r.code, r.output).toBe(0);
    const [c] = await changesBy('alice <a@example.org>');
    expect(c).toMatchObject({
      branch: 'main',
      revision: 'abc123',
      category: 'cat',
      repository: 'https://git.example.org/r.git',
      project: 'proj',
      codebase: 'cb',
      when_timestamp: 1700000000,
      revlink: 'https://git.example.org/r/abc123',
      comments: 'fix the thing é',
    });
    const files = await stage.db.pool.query(
      sql`SELECT filename FROM change_files WHERE changeid = ${c.changeid} ORDER BY filename`,
    );
    expect(files.map((f) => f.filename)).toEqual(['doc/b.md', 'src/a.c']);
    const props = await stage.db.pool.query(
      sql`SELECT property_name, property_value FROM change_properties WHERE changeid = ${c.changeid}`,
    );
    expect(props.map((p) => [p.property_name, JSON.parse(p.property_value)])).toEqual([
      ['flavour', ['mild', 'Change']],
    ]);
    // The scheduler saw it: a build set of its stamp on b1.
    const sets = await eventually(
      () =>
        stage.db.pool.query(sql`SELECT bs.id FROM buildsets bs
          JOIN buildset_sourcestamps bss ON bss.buildsetid = bs.id
          JOIN sourcestamps ss ON ss.id = bss.sourcestampid
          WHERE ss.revision = 'abc123'`),
      (rows) => rows.length === 1,
      { timeoutMs: 30_000 },
    );
    expect(sets).toHaveLength(1);
  });

  it('keeps only the files under a change source’s prefix, without it', async () => {
    const r = await sendchange([
      '--auth',
      'other:secret2',
      '--who',
      'bob',
      '--branch',
      'dev',
      'src/x.c',
      'y.c',
    ]);
    expect(r.code, r.output).toBe(0);
    const [c] = await changesBy('bob');
    const files = await stage.db.pool.query(
      sql`SELECT filename FROM change_files WHERE changeid = ${c.changeid}`,
    );
    expect(files.map((f) => f.filename)).toEqual(['x.c']);
  });

  it('refuses a wrong password, and a change it cannot store, adding nothing', async () => {
    const wrong = await sendchange(['--auth', 'change:nope', '--who', 'mallory', 'f']);
    expect(wrong.code).not.toBe(0);
    // Twisted's client shows the refused login as a RemoteError; the master says why.
    expect(wrong.output).toMatch(/RemoteError|Unauthorized/);
    expect(captured.lines.some((l) => String(l.msg).includes('refused') && l.user === 'change')).toBe(true);
    const long = await sendchange([
      '--auth',
      'change:changepw',
      '--who',
      'mallory',
      '--branch',
      'x'.repeat(300),
      'f',
    ]);
    expect(long.code).not.toBe(0);
    expect(long.output).toMatch(/branch is longer than 255/);
    expect(await changesBy('mallory')).toEqual([]);
  });
});
