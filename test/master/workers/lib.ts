// The worker listeners of one master (services/master/workers/listen.ts: Flotilla's,
// msgpack_experimental_v7 and pb) on free ports, for the workers named, each with the
// password `p` + its name and every builder named; and a Flotilla agent's hello.
import { parseMasterConfig } from '../../../services/core/config/master-config.js';
import { PROTOCOL_VERSION } from '../../../services/core/protocol/messages.js';
import { createLogger, type Logger } from '../../../services/core/telemetry/logger.js';
import type { WorkerEvents } from '../../../services/master/workers/connection.js';
import { listenForWorkers, type WorkerListeners } from '../../../services/master/workers/listen.js';

export function startListeners(
  names: string[],
  events: WorkerEvents = {},
  more: { log?: Logger; builders?: string[] } = {},
): Promise<WorkerListeners> {
  const config = parseMasterConfig(`
protocols:
  msgpack_experimental_v7: { port: 0 }
  pb: { port: 0 }
workers:
${names.map((n) => `  - { name: ${n}, password: p${n} }`).join('\n')}
builders:
${(more.builders ?? []).map((b) => `  - { name: ${b}, workers: [${names.join(', ')}], steps: [{ type: shell, command: 'true' }] }`).join('\n') || '  []'}
`);
  return listenForWorkers({
    config,
    host: '127.0.0.1',
    workerPort: 0,
    masterName: 'm',
    log: more.log ?? createLogger('test', 'silent'),
    events,
    env: {},
  });
}

/** The frame a Flotilla agent opens with. */
export const hello = (name: string, password: string): string =>
  JSON.stringify({
    type: 'hello',
    protocol: PROTOCOL_VERSION,
    name,
    password,
    info: { admin: '', host: '', access_uri: '', version: 'test' },
  });
