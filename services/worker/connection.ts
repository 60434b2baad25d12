// The worker's link to a master: connect, say hello, hand the master's messages to the
// agent, and come back with exponential backoff (capped, with jitter) whenever the link
// drops, to whichever master answers behind the service address.
//
// A master can also stop without the link dropping: frozen (SIGSTOP, a VM paused, a long
// GC), or cut off where the TCP connection lingers. The cluster then expires it and runs its
// requests elsewhere, so its commands here must not go on. The master says in its welcome how
// long a silence means it is gone (silenceMs); the worker pings it four times per silence,
// and when nothing at all came from it for that long it drops the link, which kills the
// commands (the agent's lost()). services/master/liveness.ts has the arithmetic.
import { hostname } from 'node:os';
import WebSocket from 'ws';
import {
  CloseCode,
  type MasterToWorker,
  PROTOCOL_VERSION,
  parseMasterMessage,
  type WorkerInfo,
  type WorkerToMaster,
} from '../core/protocol/messages.js';
import type { Logger } from '../core/telemetry/logger.js';

export interface MasterLink {
  /** The master we are attached to, or null while (re)connecting. */
  master(): string | null;
  send(m: WorkerToMaster): void;
  close(): Promise<void>;
}

export interface LinkHandlers {
  message: (m: MasterToWorker) => void;
  lost: () => void;
  /** The master told this worker to shut down (a worker stop or kill): it must exit. */
  shutdown: (reason: string) => void;
  /** Attached to a master (its welcome), the first time or again. */
  connected?: (master: string) => void;
}

const MIN_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 30_000;

export function connectToMaster(opts: {
  url: string;
  name: string;
  password: string;
  log: Logger;
  handlers: LinkHandlers;
  info?: Partial<WorkerInfo>;
  maxBuilds?: number;
  /** The agent's base directory, absolute (the master names builds' directories after it). */
  basedir?: string;
  /** Trusted authority (PEM) for a wss:// master whose certificate the system does not know. */
  ca?: Buffer | string;
}): MasterLink {
  const { log } = opts;
  let socket: WebSocket | null = null;
  let master: string | null = null;
  let closing = false;
  let attempt = 0;
  let retry: NodeJS.Timeout | undefined;

  const info: WorkerInfo = {
    admin: opts.info?.admin ?? process.env.WORKER_ADMIN ?? '',
    host: opts.info?.host ?? hostname(),
    access_uri: opts.info?.access_uri ?? '',
    version: opts.info?.version ?? 'flotilla-worker 0.1.0',
  };

  const open = () => {
    const ws = new WebSocket(opts.url, { handshakeTimeout: 10_000, ...(opts.ca ? { ca: opts.ca } : {}) });
    socket = ws;
    ws.on('open', () => {
      const hello: WorkerToMaster = {
        type: 'hello',
        protocol: PROTOCOL_VERSION,
        name: opts.name,
        password: opts.password,
        info,
        ...(opts.maxBuilds ? { maxBuilds: opts.maxBuilds } : {}),
        ...(opts.basedir ? { basedir: opts.basedir } : {}),
      };
      ws.send(JSON.stringify(hello));
    });
    let heard = Date.now();
    let watch: NodeJS.Timeout | undefined;
    ws.on('pong', () => {
      heard = Date.now();
    });
    ws.on('message', (data) => {
      heard = Date.now();
      const msg = parseMasterMessage(data.toString());
      if (!msg) return;
      if (msg.type === 'welcome') {
        master = msg.master;
        attempt = 0;
        log.info({ master }, 'connected to master');
        opts.handlers.connected?.(msg.master);
        const silence = msg.silenceMs;
        if (silence !== undefined) {
          watch = setInterval(() => {
            if (Date.now() - heard > silence) {
              log.warn(
                { master, silenceMs: silence },
                'the master went silent: dropping it and its commands',
              );
              clearInterval(watch);
              ws.terminate();
              return;
            }
            if (ws.readyState === WebSocket.OPEN) ws.ping();
          }, silence / 4);
          watch.unref();
        }
      } else if (master !== null) {
        opts.handlers.message(msg);
      }
    });
    ws.on('close', (code, reason) => {
      clearInterval(watch);
      const was = master;
      master = null;
      if (was) opts.handlers.lost();
      if (closing) return;
      if (code === CloseCode.shutdown) {
        closing = true;
        log.warn({ master: was, reason: reason.toString() }, 'the master asked this worker to shut down');
        opts.handlers.shutdown(reason.toString());
        return;
      }
      if (code === CloseCode.badCredentials) log.error({ url: opts.url }, 'master refused our credentials');
      else if (code === CloseCode.throttled)
        log.error({ url: opts.url }, 'master refused us: too many failed logins');
      else if (was) log.warn({ master: was, code, reason: reason.toString() }, 'lost the master');
      const delay = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * 2 ** attempt) * (0.5 + Math.random() / 2);
      attempt++;
      retry = setTimeout(open, delay);
    });
    ws.on('error', (err) => log.debug({ err: err.message }, 'master connection error'));
  };
  open();

  return {
    master: () => master,
    send: (m) => {
      if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(m));
    },
    close: async () => {
      closing = true;
      clearTimeout(retry);
      if (socket && socket.readyState !== WebSocket.CLOSED) {
        await new Promise<void>((resolve) => {
          socket!.once('close', () => resolve());
          socket!.close(CloseCode.normal, 'worker stopping');
          setTimeout(resolve, 2000).unref();
        });
      }
    },
  };
}
