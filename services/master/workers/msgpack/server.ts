// Where buildbot-workers connect (msgpack_experimental_v7): a WebSocket at `/` that admits a
// worker only with the name and password of the master configuration, sent as HTTP Basic on
// the upgrade. Refusals are answered on the upgrade as Buildbot 3.7 answers them (401 for
// missing or wrong credentials, 400 for an Authorization header that is not Basic
// name:password; test/fixtures/buildbot-msgpack/refusals.txt); everything after the upgrade
// is answered as on Flotilla's own protocol (the same close codes).
//
// After the upgrade the master does what Buildbot's does before it offers the worker builds:
// print "attached", get_worker_info, set_worker_settings, then the builder list: listdir of
// the worker's base directory, rmdir of directories no builder wants when the worker was
// created with --delete-leftover-dirs, mkdir of the builder directories that are missing.
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import { closeReason } from '../../../core/http/close-reason.js';
import { CloseCode } from '../../../core/protocol/messages.js';
import type { Logger } from '../../../core/telemetry/logger.js';
import { WorkerLoginThrottle } from '../login-throttle.js';
import { listdir, mkdir, rmdir, stat } from './commands.js';
import { MsgpackWorkerConnection } from './connection.js';
import { parseWorkerFrame, type WorkerSettings } from './messages.js';

export const MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** How often a worker is asked for a keepalive; one unanswered by the next closes the link (PB too). */
export const KEEPALIVE_MS = 30_000;
/** The most a worker may take from its login to being attached (PB too). */
export const HANDSHAKE_TIMEOUT_MS = 30_000;

// Buildbot's own line splitting (buildbot/worker/protocols/msgpack.py), so that output is cut
// into lines on both kinds of worker alike (services/master/builds/log-writer.ts does the same
// for Flotilla's agent). Two values differ, each for a reason:
// - buffer_timeout: Buildbot's 5 s would show a running build's output 5 s late; 0.1 s keeps the
//   live tail live at a cost of at most ten updates a second per command;
// - max_line_length: buildbot-worker 3.7 loses a character (and then whole pieces) of any
//   line longer than this when it cuts one, so the limit is set far above any sane line and
//   below the frame limit.
export const WORKER_SETTINGS: WorkerSettings = {
  newline_re: '(\\r\\n|\\r(?=.)|\\033\\[u|\\033\\[[0-9]+;[0-9]+[Hf]|\\033\\[2J|\\x08+)',
  max_line_length: 8 * 1024 * 1024,
  buffer_timeout: 0.1,
  buffer_size: 64 * 1024,
};

export interface MsgpackWorkerServer {
  port: number;
  connected(): MsgpackWorkerConnection[];
  get(name: string): MsgpackWorkerConnection | undefined;
  close(): Promise<void>;
}

export interface MsgpackServerOptions {
  host: string;
  port: number;
  /** Worker name -> password, from the master configuration. */
  passwords: ReadonlyMap<string, string>;
  /** The builder directories a worker should have (relative to its base directory). */
  builderDirs: (worker: string) => string[];
  /** A worker of this name is connected by another protocol. */
  connectedElsewhere?: (name: string) => boolean;
  log: Logger;
  events?: {
    connected?: (w: MsgpackWorkerConnection) => void;
    disconnected?: (w: MsgpackWorkerConnection) => void;
  };
  tls?: { cert: Buffer | string; key: Buffer | string };
  keepaliveMs?: number;
  /** Failed logins counted (shared with the master's other worker listener); default: a new one. */
  throttle?: WorkerLoginThrottle;
}

function samePassword(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The name and password of a Basic Authorization header, or null when it is not one. */
export function basicCredentials(value: string): { name: string; password: string } | null {
  const m = /^Basic +([A-Za-z0-9+/=]*)$/.exec(value);
  if (!m) return null;
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return colon < 0 ? null : { name: text.slice(0, colon), password: text.slice(colon + 1) };
}

function refuse(socket: Socket, status: number, reason: string): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
}

export async function startMsgpackWorkerServer(opts: MsgpackServerOptions): Promise<MsgpackWorkerServer> {
  const { log } = opts;
  const throttle = opts.throttle ?? new WorkerLoginThrottle();
  const workers = new Map<string, MsgpackWorkerConnection>();
  /** Names between the upgrade and the end of the handshake: one connection per name. */
  const joining = new Set<string>();
  const plain = (_req: IncomingMessage, res: import('node:http').ServerResponse) =>
    res.writeHead(426).end('websocket only');
  const http: Server = opts.tls ? createTlsServer(opts.tls, plain) : createServer(plain);
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  const keepaliveMs = opts.keepaliveMs ?? KEEPALIVE_MS;

  http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const peer = `${req.socket.remoteAddress}:${req.socket.remotePort}`;
    if ((req.url ?? '/').split('?')[0] !== '/') return refuse(socket, 404, 'Not Found');
    const header = req.headers.authorization;
    if (header === undefined) return refuse(socket, 401, 'Unauthorized');
    const cred = basicCredentials(header);
    if (!cred) return refuse(socket, 400, 'Bad request');
    const address = req.socket.remoteAddress ?? '';
    if (!throttle.allowed(cred.name, address)) {
      log.warn({ worker: cred.name, peer, protocol: 'msgpack' }, 'worker refused: too many failed logins');
      return refuse(socket, 429, 'Too Many Requests');
    }
    const expected = opts.passwords.get(cred.name);
    if (expected === undefined || !samePassword(expected, cred.password)) {
      throttle.failed(cred.name, address);
      log.warn({ worker: cred.name, peer, protocol: 'msgpack' }, 'worker refused: bad credentials');
      return refuse(socket, 401, 'Unauthorized');
    }
    throttle.succeeded(cred.name, address);
    wss.handleUpgrade(req, socket, head, (ws) => {
      const name = cred.name;
      if (workers.has(name) || joining.has(name) || opts.connectedElsewhere?.(name))
        return ws.close(CloseCode.alreadyConnected, 'already connected');
      joining.add(name);
      const conn = new MsgpackWorkerConnection(name, ws);
      let attached = false;
      let answered = true;
      const keepalive = setInterval(() => {
        if (!answered) return ws.terminate();
        answered = false;
        conn
          .call({ op: 'keepalive' })
          .then(() => {
            answered = true;
          })
          .catch(() => {});
      }, keepaliveMs);

      ws.on('message', (data, isBinary) => {
        const frame = isBinary ? parseWorkerFrame(data as Buffer) : null;
        if (!frame) return ws.close(CloseCode.badMessage, 'malformed message');
        conn.receive(frame);
      });
      ws.on('close', () => {
        clearInterval(keepalive);
        conn.closed('worker disconnected');
        if (!attached) {
          joining.delete(name);
          return;
        }
        if (workers.get(name) === conn) workers.delete(name);
        log.info({ worker: name, protocol: 'msgpack' }, 'worker disconnected');
        opts.events?.disconnected?.(conn);
      });
      ws.on('error', (err) => log.debug({ err: err.message, peer }, 'worker socket error'));

      const timer = setTimeout(
        () => ws.close(CloseCode.badHello, 'handshake timed out'),
        HANDSHAKE_TIMEOUT_MS,
      );
      handshake(conn, opts.builderDirs(name))
        .then(() => {
          clearTimeout(timer);
          if (!conn.connected) return;
          joining.delete(name);
          attached = true;
          workers.set(name, conn);
          log.info(
            { worker: name, peer, protocol: 'msgpack', version: conn.info.version },
            'worker connected',
          );
          opts.events?.connected?.(conn);
        })
        .catch((err: Error) => {
          clearTimeout(timer);
          log.warn({ worker: name, peer, err: err.message }, 'worker refused: handshake failed');
          ws.close(CloseCode.badHello, closeReason(`handshake failed: ${err.message}`));
        });
    });
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port, opts.host, () => resolve());
  });
  return {
    port: (http.address() as AddressInfo).port,
    connected: () => [...workers.values()],
    get: (name) => workers.get(name),
    close: async () => {
      for (const client of wss.clients) client.close(CloseCode.goingAway, 'master stopping');
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** What Buildbot's master does between the upgrade and offering the worker builds. */
async function handshake(conn: MsgpackWorkerConnection, wanted: string[]): Promise<void> {
  await conn.call({ op: 'print', message: 'attached' });
  const info = await conn.getWorkerInfo();
  if (typeof info.basedir !== 'string' || info.basedir === '')
    throw new Error('the worker reported no basedir');
  await conn.call({ op: 'set_worker_settings', args: WORKER_SETTINGS });
  const want = new Set([...wanted, 'info']);
  const files = await listdir(conn, info.basedir);
  if (files === null) throw new Error('the worker could not list its base directory');
  const leftovers: string[] = [];
  for (const f of files) {
    if (want.delete(f) || !info.delete_leftover_dirs) continue;
    const st = await stat(conn, conn.path(f));
    // S_IFDIR: only directories are removed, never a file the worker keeps there.
    if (st && (st[0]! & 0o170000) === 0o040000) leftovers.push(conn.path(f));
  }
  if (leftovers.length) await rmdir(conn, leftovers);
  const missing = [...want].sort().map((d) => conn.path(d));
  if (missing.length) {
    const r = await mkdir(conn, missing);
    if (r.rc !== 0) throw new Error(`the worker could not make its builder directories: ${r.text.trim()}`);
  }
}
