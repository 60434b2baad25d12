// The worker protocols a master can listen on, keyed as the configuration's `protocols`
// section (Buildbot's c['protocols']): a protocol the schema knows and this map lacks does
// not compile. Each is one file (./protocol.ts says what one is); ./listen.ts starts those
// configured, in this map's order.
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
