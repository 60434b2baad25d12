// Builds on real workers: two in-process masters on one stage, one with a real Flotilla
// agent (over its WebSocket protocol) as worker `agent`, one with a real buildbot-worker 3.7
// (over msgpack) as worker `bbw`, both on the same configuration (each builds the builders
// its worker may run).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { parseMasterConfig } from '../../../services/core/config/master-config.js';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import { startWorkerServer } from '../../../services/master/workers/flotilla/server.js';
import { startMsgpackWorkerServer } from '../../../services/master/workers/msgpack/server.js';
import { Agent } from '../../../services/worker/agent.js';
import { connectToMaster, type MasterLink } from '../../../services/worker/connection.js';
import { createBuildbotWorker, startBuildbotWorker } from '../../helpers/buildbot-worker.js';
import { freePort, type Running } from '../../helpers/processes.js';
import { type InProcessMaster, Stage } from '../in-process.js';

export interface RealWorkers {
  /** The agent's master, then the buildbot-worker's. */
  masters: InProcessMaster[];
  /** The workers' base directories. */
  agentDir: string;
  bbwDir: string;
  /** Stop both workers (the stage stops the masters). */
  stop(): Promise<void>;
}

/**
 * Both masters on `yaml` (its workers `agent` and `bbw`, password `pw`), with their workers
 * under `root`; `bbwBuilders` are the builders buildbot-worker makes directories for.
 */
export async function startRealWorkers(
  stage: Stage,
  yaml: string,
  root: string,
  bbwBuilders: string[],
): Promise<RealWorkers> {
  const log = createLogger('test', 'silent');
  const config = parseMasterConfig(yaml);
  const agentDir = join(root, 'agent');
  const bbwDir = join(root, 'bbw');
  let link: MasterLink | undefined;
  const mAgent = await stage.master('m-agent', yaml, {
    listenForWorkers: (events) =>
      startWorkerServer({ host: '127.0.0.1', port: 0, config, masterName: 'm-agent', log, events }).then(
        (s) => {
          mkdirSync(agentDir, { recursive: true });
          const agent = new Agent(agentDir, (m) => link?.send(m), log);
          link = connectToMaster({
            url: `ws://127.0.0.1:${s.port}/worker`,
            name: 'agent',
            password: 'pw',
            log,
            handlers: { message: (m) => agent.handle(m), lost: () => agent.lost(), shutdown: () => {} },
          });
          return s;
        },
      ),
  });
  const port = await freePort();
  const mBbw = await stage.master('m-bbw', yaml, {
    listenForWorkers: (events) =>
      startMsgpackWorkerServer({
        host: '127.0.0.1',
        port,
        passwords: new Map([['bbw', 'pw']]),
        builderDirs: () => bbwBuilders,
        log,
        events,
      }),
  });
  createBuildbotWorker({ dir: bbwDir, port, name: 'bbw', password: 'pw' });
  const bbw: Running = startBuildbotWorker(bbwDir);
  return {
    masters: [mAgent, mBbw],
    agentDir,
    bbwDir,
    async stop() {
      await link?.close();
      await bbw.stop();
    },
  };
}

/**
 * A test file's stage and real workers on `yaml`, under a temporary folder named from
 * `prefix`: started before its tests, stopped (the folder removed) after them.
 */
export function realWorkersSuite(prefix: string, yaml: string, bbwBuilders: string[]) {
  const suite = { root: mkdtempSync(join(tmpdir(), prefix)), stage: null as unknown as Stage };
  let workers: RealWorkers | undefined;
  beforeAll(async () => {
    suite.stage = await Stage.open();
    workers = await startRealWorkers(suite.stage, yaml, suite.root, bbwBuilders);
  }, 120_000);
  afterAll(async () => {
    await workers?.stop();
    await suite.stage?.close();
    rmSync(suite.root, { recursive: true, force: true });
  });
  return suite;
}
