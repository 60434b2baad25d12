// A real Buildbot 3.7 master (Debian's package, installed by deploy/local/test.sh) on a
// Flotilla database: started in the foreground by twistd from a folder of its own, told of
// changes through its PB change source (`buildbot sendchange`), stopped by its pid.
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, type Running, start } from './processes.js';
import { waitFor } from './wait.js';

const TWISTD = '/usr/bin/twistd3';
const BUILDBOT = '/usr/bin/buildbot';

// What `buildbot create-master` would write, reduced to loading the configuration: a master
// whose database is already Buildbot 3.7's (Flotilla's migrations) needs nothing else.
const TAC = `import os
from twisted.application import service
from buildbot.master import BuildMaster
application = service.Application('buildmaster')
BuildMaster(os.path.dirname(os.path.abspath(__file__)), 'master.cfg', None).setServiceParent(application)
`;

export interface BuildbotMaster {
  proc: Running;
  /** Its PB port (workers and `buildbot sendchange`). */
  pbPort: number;
  /** Its REST API (`http://127.0.0.1:PORT/api/v2`), when started with `www`. */
  api?: string;
  /** Its name in the masters table (host:basedir, as Buildbot names itself). */
  dir: string;
  /** A change through its PB change source, as `buildbot sendchange` posts one. */
  sendChange(change: { branch: string; revision: string; who?: string; comments?: string }): Promise<void>;
  /** SIGTERM: a clean stop, which hands its schedulers back; SIGKILL if it hangs. */
  stop(): Promise<void>;
}

// Registers the web plugin Buildbot 3.7 needs before it serves its REST API (Debian ships none).
const WWW_PLUGIN = 'test/fixtures/buildbot-3.7/www-plugin';

export interface BuildbotMasterOptions {
  /** Serve the REST API on a free port (the config reads it from BB_WWW_PORT). */
  www?: boolean;
  /** More environment for the config (what it reads with os.environ). */
  env?: Record<string, string>;
  /** Its PB port (a restarted master on the port its workers retry); a free one if unset. */
  pbPort?: number;
  /** How long it may take to log that it runs (default: waitFor's for a process). */
  readyMs?: number;
  /** Called as soon as the process is spawned, before it runs (a load runner times from here). */
  onSpawn?: (proc: Running) => void;
}

/** A foreground Buildbot master reading `config` (a master.cfg) against `dbUrl`. */
export async function startBuildbotMaster(
  config: string,
  dbUrl: string,
  opts: BuildbotMasterOptions = {},
): Promise<BuildbotMaster> {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-buildbot-'));
  writeFileSync(join(dir, 'buildbot.tac'), TAC);
  copyFileSync(config, join(dir, 'master.cfg'));
  const pbPort = opts.pbPort ?? (await freePort());
  const wwwPort = opts.www ? await freePort() : undefined;
  const env: Record<string, string> = {
    ...opts.env,
    PATH: '/usr/bin:/bin',
    HOME: dir,
    LANG: 'C.UTF-8',
    PYTHONDONTWRITEBYTECODE: '1',
    BB_DB_URL: dbUrl,
    BB_PB_PORT: String(pbPort),
    ...(wwwPort ? { BB_WWW_PORT: String(wwwPort), PYTHONPATH: resolve(WWW_PLUGIN) } : {}),
  };
  const proc = start(
    TWISTD,
    ['--nodaemon', '--no_save', '--pidfile=', '--logfile=-', '-y', 'buildbot.tac'],
    env,
    {
      cleanEnv: true,
      cwd: dir,
    },
  );
  opts.onSpawn?.(proc);
  const stop = async () => {
    // A clean stop ends in a second or two; one seen (1 of 6) hung after its housekeeping, when
    // everything the test needs of the stop (its schedulers handed back) was done.
    await proc.stop('SIGTERM', 10_000);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      'the Buildbot master to run',
      async () => proc.output().includes('BuildMaster is running'),
      { proc, ...(opts.readyMs ? { timeoutMs: opts.readyMs } : {}) },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    proc,
    pbPort,
    ...(wwwPort ? { api: `http://127.0.0.1:${wwwPort}/api/v2` } : {}),
    dir,
    stop,
    async sendChange(c) {
      const send = start(
        BUILDBOT,
        [
          'sendchange',
          `--master=127.0.0.1:${pbPort}`,
          '--auth=change:change-pw',
          `--who=${c.who ?? 'Dev <dev@example.com>'}`,
          `--branch=${c.branch}`,
          `--revision=${c.revision}`,
          `--comments=${c.comments ?? 'sent to the Buildbot master'}`,
          'README',
        ],
        env,
        { cleanEnv: true, cwd: dir },
      );
      const code = await send.exited;
      if (code !== 0) throw new Error(`buildbot sendchange: ${code}\n${send.output()}`);
    },
  };
}
