// Review issue 13, finding 4 (medium): worker credentials and environment. A build step read
// WORKER_PASSWORD from /proc/$PPID/environ, connected as that worker, received the next build's
// command and had its forged output accepted. Now:
// - the agent takes its password from a file (WORKER_PASSWORD_FILE) or standard input,
//   never from its environment;
// - steps run with the host's environment minus the agent's own variables (WORKER_*,
//   MASTER_*, OTEL_*, PROBE_PORT), and their log headers show that environment;
// - given WORKER_STEP_USER (the agent as root), steps run as another user, who can read
//   neither the password file nor the agent's /proc entries, nor smuggle the file out as a
//   log file;
// - worker logins are throttled per worker name and address, and per address.
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { loadWorkerEnv } from '../../services/core/config/env.js';
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import { CloseCode, PROTOCOL_VERSION } from '../../services/core/protocol/messages.js';
import { createLogger } from '../../services/core/telemetry/logger.js';
import { startWorkerServer, type WorkerServer } from '../../services/master/workers/flotilla/server.js';
import { WorkerLoginThrottle } from '../../services/master/workers/login-throttle.js';
import { checkStepUser, readPassword, resolveStepUser } from '../../services/worker/credentials.js';
import { Cluster, type MasterProc } from '../e2e/cluster.js';
import type { BuilderOverride } from '../helpers/master-config.js';
import { asRoot, expectRoot, SKIP_UNLESS_ROOT } from '../helpers/root.js';

describe('where the password comes from', () => {
  it('never the environment: WORKER_PASSWORD is refused, saying where it belongs', () => {
    expect(() => loadWorkerEnv({ WORKER_NAME: 'w', WORKER_PASSWORD: 'pw' })).toThrow(/invalid environment/);
    try {
      loadWorkerEnv({ WORKER_NAME: 'w', WORKER_PASSWORD: 'pw' });
    } catch (err) {
      const problems = (err as { problems: string[] }).problems.join('\n');
      expect(problems).toMatch(/WORKER_PASSWORD: .*WORKER_PASSWORD_FILE.*standard input/);
      expect(problems).not.toContain('pw');
    }
  });

  it('a file (its first line) or standard input', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-pw-'));
    try {
      writeFileSync(join(dir, 'pw'), 's3cret\n');
      expect(loadWorkerEnv({ WORKER_NAME: 'w', WORKER_PASSWORD_FILE: join(dir, 'pw') }).passwordFile).toBe(
        join(dir, 'pw'),
      );
      expect(await readPassword(join(dir, 'pw'))).toBe('s3cret');
      const stdin = Readable.from([
        Buffer.from('from-'),
        Buffer.from('stdin\n'),
      ]) as unknown as NodeJS.ReadStream;
      expect(await readPassword(null, stdin)).toBe('from-stdin');
      const empty = Readable.from([]) as unknown as NodeJS.ReadStream;
      await expect(readPassword(null, empty)).rejects.toThrow(/no password/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // The check reads the file's owner and mode and is given the agent's uid (0: an agent
  // that can switch users), so it runs as any user; only running the steps needs root.
  it('a step user must not be root nor able to read the password file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-pw-'));
    try {
      const file = join(dir, 'pw');
      writeFileSync(file, 'x\n');
      const nobody = resolveStepUser('nobody');
      chmodSync(file, 0o644);
      expect(() => checkStepUser(nobody, file, 0)).toThrow(/invalid environment/);
      chmodSync(file, 0o600);
      expect(() => checkStepUser(nobody, file, 0)).not.toThrow();
      expect(() => checkStepUser(resolveStepUser('0'), file, 0)).toThrow(/invalid environment/);
      expect(() => checkStepUser(nobody, file, 1000)).toThrow(/invalid environment/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// What a hostile step tries: every place the agent's secret could be.
// (Errors go to standard output, so that each follows its heading; only regular files among
// the agent's open files are read: reading its pipes or event descriptors would steal theirs.)
const LOOK = (passwordFile: string) =>
  [
    'echo "== env"; env',
    'echo "== parent environ"; cat /proc/$PPID/environ 2>&1 | tr "\\0" "\\n"',
    'echo "== parent cmdline"; cat /proc/$PPID/cmdline 2>&1 | tr "\\0" " "; echo',
    'echo "== parent files"; for f in /proc/$PPID/fd/*; do echo "$f -> $(readlink "$f" 2>&1)"; [ -f "$f" ] && head -c 300 "$f" 2>&1; done',
    'echo "== parent memory"; dd if=/proc/$PPID/mem bs=1 count=1 2>&1 | head -2',
    `echo "== password file"; cat ${passwordFile} 2>&1`,
    `ln -sf ${passwordFile} stolen.txt`,
    'echo "== id"; id -u',
  ].join('\n');

describe('a hostile build step on a real worker', () => {
  let c: Cluster;
  let master: MasterProc;
  let secrets: string;
  const pwFile = () => join(secrets, 'w2-password');

  beforeAll(async () => {
    secrets = mkdtempSync(join(tmpdir(), 'flotilla-secrets-'));
    writeFileSync(pwFile(), `${Cluster.password('w2')}\n`, { mode: 0o600 });
    // After looking around, the step's files go through the transfer steps, which the agent
    // runs itself: an upload of the link to the password, a download into a link it planted.
    const builder = (name: string, worker: string): BuilderOverride => ({
      name,
      workers: [worker],
      steps: [
        { type: 'shell', name: 'look', logfiles: { stolen: 'stolen.txt' }, command: LOOK(pwFile()) },
        {
          type: 'file_upload',
          name: 'smuggle',
          workersrc: 'stolen.txt',
          masterdest: 'stolen.txt',
          haltOnFailure: false,
        },
        { type: 'shell', name: 'plant', command: `ln -sf ${join(secrets, `planted-${name}`)} victim.txt` },
        {
          type: 'string_download',
          name: 'overwrite',
          s: 'planted',
          workerdest: 'victim.txt',
          haltOnFailure: false,
        },
      ],
    });
    c = await Cluster.start({
      config: {
        builders: [builder('look-same-user', 'w1'), builder('look-step-user', 'w2')],
        force_schedulers: [
          { name: 'force-look-same-user', builders: ['look-same-user'] },
          { name: 'force-look-step-user', builders: ['look-step-user'] },
        ],
      },
    });
    master = await c.startMaster('m1');
    // The step user must reach its work directory (below the cluster's private folder).
    chmodSync(c.dir, 0o711);
  }, 120_000);
  afterAll(async () => {
    await c?.stop();
    if (secrets) rmSync(secrets, { recursive: true, force: true });
  });

  /** The step's log, split into its header lines and the rest, and its extra logs. */
  async function lookAround(scheduler: string) {
    const [, brids] = await c.force(scheduler);
    const build = await c.finished((await c.buildOf(Object.values(brids)[0]!)).buildid);
    const step = (await c.get(`/builds/${build.buildid}/steps`)).steps.find((s: any) => s.name === 'look');
    const log = (await c.get(`/steps/${step.stepid}/logs/stdio`)).logs[0];
    const content: string = (await c.get(`/logs/${log.logid}/contents`)).logchunks[0].content;
    const lines = content.split('\n');
    const logs = (await c.get(`/steps/${step.stepid}/logs`)).logs.map((l: any) => l.slug);
    const stolen = logs.includes('stolen') ? await c.text(`/steps/${step.stepid}/logs/stolen/raw`) : '';
    const stepsDone = (await c.get(`/builds/${build.buildid}/steps`)).steps as any[];
    const artifacts = (await c.get(`/builds/${build.buildid}/artifacts`)).artifacts as any[];
    return {
      transfers: {
        smuggle: stepsDone.find((s) => s.name === 'smuggle')?.results,
        overwrite: stepsDone.find((s) => s.name === 'overwrite')?.results,
        artifacts: artifacts.map((a) => a.name),
      },
      header: lines.filter((l) => l.startsWith('h')).map((l) => l.slice(1)),
      output: lines.filter((l) => !l.startsWith('h')).map((l) => l.slice(1)),
      stolen,
    };
  }

  const AGENT_VARIABLE = /^ {2}(WORKER_|MASTER_|OTEL_|PROBE_PORT=)/;

  it("password on standard input, steps as the agent's user: not in the step's environment, the agent's, its command line or its open files", async () => {
    await c.startWorker('w1', master);
    const { header, output } = await lookAround('force-look-same-user');
    expect(output).toContain('== parent environ');
    // The step's environment has none of the agent's variables; the agent's own (readable:
    // the step runs as the same user) holds no secret.
    const env = output.slice(output.indexOf('== env') + 1, output.indexOf('== parent environ'));
    expect(env.some((l) => l.startsWith('PATH='))).toBe(true);
    expect(env.filter((l) => /^(WORKER_|MASTER_|OTEL_|PROBE_PORT=)/.test(l))).toEqual([]);
    expect(output.join('\n')).not.toContain(Cluster.password('w1'));
    expect(header.some((l) => AGENT_VARIABLE.test(l))).toBe(false);
    expect(header).toContain(' environment:');
    expect(header.some((l) => l.startsWith('  PATH='))).toBe(true);
  });

  it.skipIf(SKIP_UNLESS_ROOT)(
    asRoot(
      'password in a file, steps as WORKER_STEP_USER: nothing of the agent is readable, no log file smuggles it out',
    ),
    async () => {
      expectRoot();
      await c.startWorker('w2', master, { WORKER_PASSWORD_FILE: pwFile(), WORKER_STEP_USER: 'nobody' });
      const { header, output, stolen, transfers } = await lookAround('force-look-step-user');
      const text = output.join('\n');
      expect(text).not.toContain(Cluster.password('w2'));
      expect(stolen).not.toContain(Cluster.password('w2'));
      expect(text).toContain(`== id\n${resolveStepUser('nobody').uid}`);
      for (const what of ['parent environ', 'parent memory', 'password file']) {
        const at = output.indexOf(`== ${what}`);
        expect(output[at + 1], what).toMatch(/Permission denied/);
      }
      expect(header.some((l) => AGENT_VARIABLE.test(l))).toBe(false);
      expect(header).toContain('  USER=nobody');
      // The agent, as root, neither reads the link to its password nor writes through a link.
      expect(transfers).toEqual({ smuggle: 2, overwrite: 2, artifacts: [] });
      expect(existsSync(join(secrets, 'planted-look-step-user'))).toBe(false);
    },
  );
});

describe('worker logins are throttled per name and address, and per address', () => {
  let server: WorkerServer;
  beforeAll(async () => {
    server = await startWorkerServer({
      host: '127.0.0.1',
      port: 0,
      config: parseMasterConfig(
        'workers: [{ name: a, password: pa }, { name: b, password: pb }, { name: c, password: pc }]',
      ),
      masterName: 'm',
      log: createLogger('test', 'silent'),
      throttle: new WorkerLoginThrottle({
        maxFailuresPerWorkerAndAddress: 3,
        maxFailuresPerAddress: 5,
        windowMs: 60_000,
      }),
    });
  });
  afterAll(async () => server?.close());

  /** One login attempt from `from`: the close code, or 'welcome'. */
  function login(name: string, password: string, from: string): Promise<number | 'welcome'> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${server.port}/worker`, { localAddress: from });
      ws.on('open', () =>
        ws.send(JSON.stringify({ type: 'hello', protocol: PROTOCOL_VERSION, name, password, info: {} })),
      );
      ws.on('message', (d) => {
        if (JSON.parse(d.toString()).type === 'welcome') {
          ws.close();
          resolve('welcome');
        }
      });
      ws.on('close', (code) => resolve(code));
      ws.on('error', reject);
    });
  }

  it("guessing a worker's password from one address shuts out that address, not the worker", async () => {
    for (let i = 0; i < 3; i++) expect(await login('a', 'wrong', '127.0.0.2')).toBe(CloseCode.badCredentials);
    // Now even the right password is not checked from there...
    expect(await login('a', 'pa', '127.0.0.2')).toBe(CloseCode.throttled);
    // ...while the worker itself, elsewhere, gets in.
    expect(await login('a', 'pa', '127.0.0.3')).toBe('welcome');
  });

  it('an address that guesses across workers is shut out for all of them', async () => {
    expect(await login('b', 'wrong', '127.0.0.4')).toBe(CloseCode.badCredentials);
    expect(await login('b', 'wrong', '127.0.0.4')).toBe(CloseCode.badCredentials);
    expect(await login('c', 'wrong', '127.0.0.4')).toBe(CloseCode.badCredentials);
    expect(await login('c', 'wrong', '127.0.0.4')).toBe(CloseCode.badCredentials);
    expect(await login('a', 'wrong', '127.0.0.4')).toBe(CloseCode.badCredentials);
    expect(await login('c', 'pc', '127.0.0.4')).toBe(CloseCode.throttled);
    expect(await login('c', 'pc', '127.0.0.5')).toBe('welcome');
  });
});
