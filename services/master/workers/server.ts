// Where workers connect: a WebSocket listener that admits a worker only with the name and
// password of the master configuration, one connection per worker name.
import { timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { type MasterConfig, workerPassword } from '../../core/config/master-config.js';
import {
  CloseCode,
  type MasterToWorker,
  PROTOCOL_VERSION,
  parseWorkerMessage,
  WORKER_PATH,
  type WorkerInfo,
} from '../../core/protocol/messages.js';
import type { Logger } from '../../core/telemetry/logger.js';

export interface ConnectedWorker {
  name: string;
  info: WorkerInfo;
  socket: WebSocket;
}

export interface WorkerServer {
  port: number;
  connected(): ConnectedWorker[];
  close(): Promise<void>;
}

const HELLO_TIMEOUT_MS = 10_000;
const KEEPALIVE_MS = 30_000;

function samePassword(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export async function startWorkerServer(opts: {
  host: string;
  port: number;
  config: MasterConfig;
  masterName: string;
  log: Logger;
}): Promise<WorkerServer> {
  const { log } = opts;
  const passwords = new Map(opts.config.workers.map((w) => [w.name, workerPassword(w)]));
  const workers = new Map<string, ConnectedWorker>();
  const http: Server = createServer((_req, res) => res.writeHead(426).end('websocket only'));
  const wss = new WebSocketServer({ server: http, path: WORKER_PATH, maxPayload: 16 * 1024 * 1024 });

  wss.on('connection', (socket, req) => {
    const peer = `${req.socket.remoteAddress}:${req.socket.remotePort}`;
    let name: string | null = null;
    let alive = true;
    const helloTimer = setTimeout(() => socket.close(CloseCode.badHello, 'no hello'), HELLO_TIMEOUT_MS);
    const keepalive = setInterval(() => {
      if (!alive) return socket.terminate();
      alive = false;
      socket.ping();
    }, KEEPALIVE_MS);
    socket.on('pong', () => {
      alive = true;
    });

    socket.on('message', (data, isBinary) => {
      if (name !== null) return; // later messages belong to the build protocol
      const msg = isBinary ? null : parseWorkerMessage(data.toString());
      if (!msg) return socket.close(CloseCode.badHello, 'expected hello');
      clearTimeout(helloTimer);
      if (msg.protocol !== PROTOCOL_VERSION)
        return socket.close(CloseCode.protocolVersion, `protocol ${PROTOCOL_VERSION} only`);
      const expected = passwords.get(msg.name);
      if (expected === undefined || !samePassword(expected, msg.password)) {
        log.warn({ worker: msg.name, peer }, 'worker refused: bad credentials');
        return socket.close(CloseCode.badCredentials, 'bad credentials');
      }
      if (workers.has(msg.name)) return socket.close(CloseCode.alreadyConnected, 'already connected');
      name = msg.name;
      workers.set(name, { name, info: msg.info, socket });
      const welcome: MasterToWorker = {
        type: 'welcome',
        master: opts.masterName,
        protocol: PROTOCOL_VERSION,
      };
      socket.send(JSON.stringify(welcome));
      log.info({ worker: name, peer }, 'worker connected');
    });

    socket.on('close', () => {
      clearTimeout(helloTimer);
      clearInterval(keepalive);
      if (name !== null && workers.get(name)?.socket === socket) {
        workers.delete(name);
        log.info({ worker: name }, 'worker disconnected');
      }
    });
    socket.on('error', (err) => log.debug({ err: err.message, peer }, 'worker socket error'));
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port, opts.host, () => resolve());
  });
  return {
    port: (http.address() as AddressInfo).port,
    connected: () => [...workers.values()],
    close: async () => {
      for (const w of workers.values()) w.socket.close(CloseCode.goingAway, 'master stopping');
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
