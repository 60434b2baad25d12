// The worker protocols a master can listen on, keyed as the configuration's `protocols`
// section (Buildbot's c['protocols']): a protocol the schema knows and this map lacks does
// not compile. Each is one file (./protocol.ts says what one is); ./listen.ts starts those
// configured, in this map's order. Buildbot's two load their servers only when configured
// (pb's 17 modules, msgpack's 8 and @msgpack/msgpack): service.js's import, with them and
// without, six pairs: 466/380, 387/307, 366/383, 429/388, 383/350, 362/358 ms of CPU
// (medians of 7-9, 2026-11-29, load 14-16, load/fleet/import-cpu.ts as master.ts's jobs say).
import type { ProtocolsConfig } from '../../core/config/master-config.js';
import { flotillaProtocol } from './flotilla/protocol.js';
import { msgpackProtocol } from './msgpack/protocol.js';
import { pbProtocol } from './pb/protocol.js';
import type { WorkerProtocol } from './protocol.js';

export type ProtocolName = keyof ProtocolsConfig;

export const WORKER_PROTOCOLS: { readonly [K in ProtocolName]-?: WorkerProtocol } = {
  flotilla: flotillaProtocol,
  msgpack_experimental_v7: msgpackProtocol,
  pb: pbProtocol,
};
