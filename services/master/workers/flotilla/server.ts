// Where workers connect: a WebSocket listener that admits a worker only with the name and
// password of the master configuration, one connection per worker name, and refuses an
// address that keeps guessing (login-throttle.ts).
import { timingSafeEqual } from 'node:crypto';
import type { RequestListener, Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { type MasterConfig, workerPassword } from '../../../core/config/master-config.js';
import { http as nodeHttp } from '../../../core/http/node-http.js';
import {
  CloseCode,
  type MasterToWorker,
  PROTOCOL_VERSION,
  parseWorkerMessage,
  WORKER_PATH,
} from '../../../core/protocol/messages.js';
import type { Logger } from '../../../core/telemetry/logger.js';
import { livenessOf } from '../../liveness.js';
import type { ConnectedWorkers, WorkerEvents } from '../connection.js';
import { WorkerLoginThrottle } from '../login-throttle.js';
import { FlotillaConnection } from './connection.js';

export interface WorkerServer extends ConnectedWorkers {
  port: number;
  connected(): FlotillaConnection[];
  get(name: string): FlotillaConnection | undefined;
}

const HELLO_TIMEOUT_MS = 10_000;
const KEEPALIVE_MS = 30_000;
// The largest frame a worker may send: output comes in batches of 32 KiB, so anything near
// this is not a worker speaking our protocol.
const MAX_FRAME_BYTES = 16 * 1024 * 1024;

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
  events?: WorkerEvents;
  /** Where a worker's `password_env` is looked up (the process's environment, read in main). */
  env?: Record<string, string | undefined>;
  /** Certificate and key (PEM): workers connect with wss:// and the password never crosses in clear. */
  tls?: { cert: Buffer | string; key: Buffer | string };
  /** A worker of this name is connected by another protocol (../listen.ts). */
  connectedElsewhere?: (name: string) => boolean;
  /** Failed logins counted (shared with the master's other worker listener); default: a new one. */
  throttle?: WorkerLoginThrottle;
}): Promise<WorkerServer> {
  const { log } = opts;
  // Replaced by a reloaded configuration: a removed worker's next login is refused.
  let config = opts.config;
  let passwords = passwordsOf(config, opts.env ?? {});
  const throttle = opts.throttle ?? new WorkerLoginThrottle();
  const workers = new Map<string, FlotillaConnection>();
  const refuse: RequestListener = (_req, res) => res.writeHead(426).end('websocket only');
  const http: Server = opts.tls ? createTlsServer(opts.tls, refuse) : nodeHttp.createServer(refuse);
  const wss = new WebSocketServer({ server: http, path: WORKER_PATH, maxPayload: MAX_FRAME_BYTES });
  // ws passes the HTTP server's errors on to the WebSocketServer, where an 'error' without a
  // listener is thrown: a port in use killed the master with a stack trace before the listen
  // below could say which port (issue 28). The listen's own handler reports it.
  wss.on('error', (err) => log.debug({ err: err.message }, 'worker listener error'));

  wss.on('connection', (socket, req) => {
    // What the handlers below keep for the connection's life is all they name: `req` named in
    // one of them kept the whole upgrade request (its headers, its stream's state) for as long
    // as the worker stayed, and the hello's timer once cleared: 1.4 KiB of a connected worker's
    // 6.5 in a master's heap snapshot (load/results/fleet.md, 2026-11-29 08:23-08:38;
    // test/master/workers/connection-memory.test.ts).
    const address = req.socket.remoteAddress ?? '';
    const peer = `${req.socket.remoteAddress}:${req.socket.remotePort}`;
    let conn = null as FlotillaConnection | null;
    let alive = true;
    let helloTimer: NodeJS.Timeout | undefined = setTimeout(
      () => socket.close(CloseCode.badHello, 'no hello'),
      HELLO_TIMEOUT_MS,
    );
    const keepalive = setInterval(() => {
      if (!alive) return socket.terminate();
      alive = false;
      socket.ping();
    }, KEEPALIVE_MS);
    socket.on('pong', () => {
      alive = true;
    });

    socket.on('message', (data, isBinary) => {
      const msg = isBinary ? null : parseWorkerMessage(data.toString());
      if (conn !== null) {
        if (!msg) return socket.close(CloseCode.badMessage, 'malformed message');
        return conn.receive(msg);
      }
      if (msg?.type !== 'hello') return socket.close(CloseCode.badHello, 'expected hello');
      clearTimeout(helloTimer);
      helloTimer = undefined;
      if (msg.protocol !== PROTOCOL_VERSION)
        return socket.close(CloseCode.protocolVersion, `protocol ${PROTOCOL_VERSION} only`);
      if (!throttle.allowed(msg.name, address)) {
        log.warn({ worker: msg.name, peer }, 'worker refused: too many failed logins');
        return socket.close(CloseCode.throttled, 'too many failed logins: try again later');
      }
      const expected = passwords.get(msg.name);
      if (expected === undefined || !samePassword(expected, msg.password)) {
        throttle.failed(msg.name, address);
        log.warn({ worker: msg.name, peer }, 'worker refused: bad credentials');
        return socket.close(CloseCode.badCredentials, 'bad credentials');
      }
      throttle.succeeded(msg.name, address);
      if (workers.has(msg.name) || opts.connectedElsewhere?.(msg.name))
        return socket.close(CloseCode.alreadyConnected, 'already connected');
      const c = new FlotillaConnection(msg.name, msg.info, socket, msg.basedir ?? null);
      conn = c;
      workers.set(c.name, c);
      const welcome: MasterToWorker = {
        type: 'welcome',
        master: opts.masterName,
        protocol: PROTOCOL_VERSION,
        silenceMs: livenessOf(config).workerSilenceMs,
      };
      socket.send(JSON.stringify(welcome));
      log.info({ worker: c.name, peer }, 'worker connected');
      opts.events?.connected?.(c);
    });

    socket.on('close', () => {
      clearTimeout(helloTimer);
      clearInterval(keepalive);
      const c = conn;
      if (c !== null && workers.get(c.name) === c) {
        workers.delete(c.name);
        c.closed('worker disconnected');
        log.info({ worker: c.name }, 'worker disconnected');
        opts.events?.disconnected?.(c);
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
    get: (name) => workers.get(name),
    reconfigure: (next) => {
      config = next;
      passwords = passwordsOf(next, opts.env ?? {});
    },
    close: async () => {
      for (const client of wss.clients) client.close(CloseCode.goingAway, 'master stopping');
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function passwordsOf(config: MasterConfig, env: Record<string, string | undefined>): Map<string, string> {
  return new Map(config.workers.map((w) => [w.name, workerPassword(w, env)]));
}
