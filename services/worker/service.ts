// The worker agent, started by main.ts once telemetry is on. It needs no
// database and no Redis: a worker runs untrusted build commands, so it holds nothing but
// its own name and password, and talks only to a master. The password comes from a file or
// standard input, never the environment, and steps run without the agent's own variables
// and, given WORKER_STEP_USER, as another user (credentials.ts).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadWorkerEnv, type WorkerEnv } from '../core/config/env.js';
import { ConfigError } from '../core/config/errors.js';
import { exitOnConfigError } from '../core/config/fatal.js';
import { startProbeServer } from '../core/http/probe-server.js';
import { onShutdown } from '../core/lifecycle.js';
import { createLogger } from '../core/telemetry/logger.js';
import { startTelemetry } from '../core/telemetry/tracing.js';
import { Agent } from './agent.js';
import { connectToMaster, type MasterLink } from './connection.js';
import { checkStepUser, readPassword, resolveStepUser, type StepUser } from './credentials.js';
import { WorkerMetrics } from './metrics.js';
import { Reaper } from './reaper.js';

let env: WorkerEnv;
let password: string;
let stepUser: StepUser | undefined;
try {
  env = loadWorkerEnv();
  password = await readPassword(env.passwordFile);
  if (env.stepUser !== null) {
    stepUser = resolveStepUser(env.stepUser);
    checkStepUser(stepUser, env.passwordFile);
  }
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  createLogger('worker', 'info').fatal({ code: err.code, problems: err.problems }, err.message);
  process.exit(2);
}
const telemetry = await startTelemetry('flotilla-worker');
const log = createLogger('worker', env.logLevel).child({ worker: env.workerName });
if (!stepUser) {
  log.warn(
    "steps run as the worker's own user: they can read its password file and memory; " +
      'run the worker as root with WORKER_STEP_USER to keep them out of reach (docs/security.md)',
  );
}
let link: MasterLink | null = null;
const reaper = new Reaper(log);
reaper.start();
const agent = new Agent(
  env.workdir,
  (m) => {
    metrics.sent(m);
    link?.send(m);
  },
  log,
  reaper,
  stepUser,
);
const metrics = new WorkerMetrics({ running: () => agent.running, connected: () => link?.master() != null });
// Before connecting: a probe port that cannot be had ends the start before any command runs.
const probes = await exitOnConfigError(log, () =>
  startProbeServer({
    host: env.host,
    port: env.probePort,
    checks: [
      {
        name: 'master',
        run: async () => {
          if (!link?.master()) throw new Error('not connected to a master');
        },
      },
    ],
    metrics: async () => ({
      contentType: metrics.registry.contentType,
      body: await metrics.registry.metrics(),
    }),
  }),
);
link = connectToMaster({
  url: env.masterUrl,
  name: env.workerName,
  password,
  basedir: resolve(env.workdir),
  ...(env.masterCaFile ? { ca: readFileSync(env.masterCaFile) } : {}),
  log,
  handlers: {
    message: (m) => {
      if (m.type === 'start') metrics.commandStarted();
      agent.handle(m);
    },
    connected: () => metrics.connected(),
    lost: () => agent.lost(),
    // As buildbot-worker does on a remote shutdown: the process ends; its supervisor decides what next.
    shutdown: () => process.kill(process.pid, 'SIGTERM'),
  },
});
log.info({ master: env.masterUrl, probePort: probes.port }, 'worker started');

// An interrupted command gets KILL_GRACE_MS (command.ts) before SIGKILL; a little more for its end.
const COMMANDS_GRACE_MS = 6000;

onShutdown(log, () => [
  // Their ends reach the master before the link closes: it then knows they are over.
  { name: 'commands', run: () => agent.stopAll('the worker is stopping', COMMANDS_GRACE_MS) },
  { name: 'master link', run: () => link!.close() },
  { name: 'probes', run: () => probes.close() },
  { name: 'telemetry', run: () => telemetry.shutdown() },
  // Commands still in their interrupt's grace go with the agent.
  { name: 'reaper', run: async () => reaper.stop() },
]);
