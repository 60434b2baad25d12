// One listening socket in front of the API's Fastify application, so that a reloaded
// configuration (services/core/config/reload.ts) is a new application swapped in between two requests
// (issue 33 §3). Every part the configuration shapes (force schedulers, change hooks, logins,
// www's CORS, rate limit, caches) is built into an application once, as at start
// (http/server.ts): a new configuration builds a whole new one, never edits a running one, so
// a request sees either the old configuration or the new one, never half of each.
//
// The applications never listen themselves: the front server hands each request, upgrade
// (/ws) and client error to the current application's own (unbound) server, whose listeners
// are Fastify's and @fastify/websocket's. The front server takes the current application's
// connection settings (header size, timeouts: www.limits) for the connections it accepts next.
//
// The application swapped out is closed once the requests it was answering are answered (at
// most DRAIN_MS): its parts (read pool, caches, events hub) stop then. Its websocket and SSE
// clients are closed with it; they reconnect to the new one, as after a pod's restart.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

// An answer still running this long after the swap (a large raw log download) is cut off.
const DRAIN_MS = 60_000;

// The connection settings Node reads from the server for each new connection.
const SETTINGS = [
  'maxHeaderSize',
  'headersTimeout',
  'requestTimeout',
  'keepAliveTimeout',
  'timeout',
] as const;

interface Serving {
  app: FastifyInstance;
  inFlight: number;
  drained: (() => void) | null;
}

export class AppSwitch {
  readonly server: Server;
  private current: Serving;

  constructor(first: FastifyInstance) {
    this.current = { app: first, inFlight: 0, drained: null };
    this.server = createServer();
    this.takeSettings(first);
    this.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const serving = this.current;
      serving.inFlight++;
      res.once('close', () => {
        serving.inFlight--;
        if (serving.inFlight === 0) serving.drained?.();
      });
      serving.app.server.emit('request', req, res);
    });
    for (const event of ['upgrade', 'clientError'] as const)
      this.server.on(event, (...args: unknown[]) => this.current.app.server.emit(event, ...args));
  }

  /** The application answering now. */
  get app(): FastifyInstance {
    return this.current.app;
  }

  listen(port: number, host: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  /** `next` answers every request from the call on; resolves once the one it replaced is closed. */
  async swap(next: FastifyInstance): Promise<void> {
    const old = this.current;
    this.current = { app: next, inFlight: 0, drained: null };
    this.takeSettings(next);
    if (old.inFlight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, DRAIN_MS);
        old.drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    await old.app.close();
  }

  /** Stop accepting, answer what is open, then close the current application. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    await closed;
    await this.current.app.close();
  }

  private takeSettings(app: FastifyInstance): void {
    const from = app.server as unknown as Record<string, unknown>;
    const to = this.server as unknown as Record<string, unknown>;
    for (const key of SETTINGS) to[key] = from[key];
  }
}
