// The master-worker protocol: JSON text frames over one WebSocket, typed once for both sides.
// The worker speaks first (hello); the master answers welcome or closes the socket with
// one of the close codes below.

export const PROTOCOL_VERSION = 1;
export const WORKER_PATH = '/worker';

export const CloseCode = {
  normal: 1000,
  goingAway: 1001,
  badHello: 4000,
  badCredentials: 4001,
  alreadyConnected: 4002,
  protocolVersion: 4003,
} as const;

export interface WorkerInfo {
  admin: string;
  host: string;
  access_uri: string;
  version: string;
}

export type WorkerToMaster = {
  type: 'hello';
  protocol: number;
  name: string;
  password: string;
  info: WorkerInfo;
};

export type MasterToWorker = { type: 'welcome'; master: string; protocol: number };

export function parseWorkerMessage(text: string): WorkerToMaster | null {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof m !== 'object' || m === null) return null;
  const o = m as Record<string, unknown>;
  if (
    o.type === 'hello' &&
    typeof o.name === 'string' &&
    typeof o.password === 'string' &&
    typeof o.protocol === 'number'
  ) {
    const info = (typeof o.info === 'object' && o.info !== null ? o.info : {}) as Record<string, unknown>;
    const str = (k: string) => (typeof info[k] === 'string' ? (info[k] as string) : '');
    return {
      type: 'hello',
      protocol: o.protocol,
      name: o.name,
      password: o.password,
      info: {
        admin: str('admin'),
        host: str('host'),
        access_uri: str('access_uri'),
        version: str('version'),
      },
    };
  }
  return null;
}

export function parseMasterMessage(text: string): MasterToWorker | null {
  try {
    const o = JSON.parse(text) as Record<string, unknown>;
    if (o?.type === 'welcome' && typeof o.master === 'string') return o as unknown as MasterToWorker;
  } catch {
    // fall through
  }
  return null;
}
