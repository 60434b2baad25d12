// A master's worker server and a Flotilla agent connected to it over a real WebSocket, for
// tests of the protocol: the agent works in `dir`.
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import { createLogger } from '../../services/core/telemetry/logger.js';
import type { FlotillaConnection } from '../../services/master/workers/flotilla/connection.js';
import { startWorkerServer } from '../../services/master/workers/flotilla/server.js';
import { Agent } from '../../services/worker/agent.js';
import { connectToMaster, type MasterLink } from '../../services/worker/connection.js';
import { waitFor } from '../helpers/wait.js';

export interface Pair {
  conn: FlotillaConnection;
  close(): Promise<void>;
}

export async function connectAgent(dir: string): Promise<Pair> {
  const log = createLogger('test', 'silent');
  const config = parseMasterConfig('workers: [{ name: w1, password: pw }]');
  const server = await startWorkerServer({ host: '127.0.0.1', port: 0, config, masterName: 'm', log });
  let link: MasterLink | null = null;
  const agent = new Agent(dir, (m) => link?.send(m), log);
  link = connectToMaster({
    url: `ws://127.0.0.1:${server.port}/worker`,
    name: 'w1',
    password: 'pw',
    log,
    handlers: { message: (m) => agent.handle(m), lost: () => agent.lost(), shutdown: () => {} },
  });
  await waitFor('the worker to connect', () => server.get('w1') !== undefined);
  return {
    conn: server.get('w1')!,
    close: async () => {
      await link?.close();
      await server.close();
    },
  };
}
