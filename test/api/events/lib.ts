// The event endpoints under test: the plugin on a bare Fastify app listening on a free port
// (so options such as the ping interval can be set), a private Redis per suite (events of
// other suites never interleave), and clients that collect what they receive.
import http from 'node:http';
import net from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { WebSocket } from 'ws';
import type { EventHub } from '../../../services/api/events/hub.js';
import { type EventsOptions, eventsPlugin } from '../../../services/api/events/plugin.js';
import { createRedis, type Redis } from '../../../services/core/redis.js';
import { type Running, startRedis } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/wait.js';

export interface SuiteRedis {
  url: string;
  /** A client of it, for publishing as a master would. */
  redis: Redis;
}

/**
 * A private Redis for the suite, started before its tests and stopped after them (hooks
 * registered here), so that no other suite's events ever reach these clients.
 */
export function useRedis(): SuiteRedis {
  const state = {} as SuiteRedis & { proc: Running };
  beforeAll(async () => {
    const r = await startRedis();
    state.proc = r.proc;
    state.url = r.url;
    state.redis = createRedis(r.url, 'events-test');
  });
  afterAll(async () => {
    await state.redis?.quit();
    await state.proc?.stop();
  });
  return state;
}

export interface EventsApp {
  app: FastifyInstance;
  hub: EventHub;
  origin: string;
  ws: string;
  close(): Promise<void>;
}

export async function startEventsApp(
  redisUrl: string,
  opts: Partial<EventsOptions> = {},
  setup?: (app: FastifyInstance) => void,
): Promise<EventsApp> {
  const redis = createRedis(redisUrl, 'events-test');
  const app = Fastify();
  setup?.(app);
  let hub: EventHub | undefined;
  await app.register(eventsPlugin, { redis, ...opts, onHub: (h) => (hub = h) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  await hub!.ready;
  const port = (app.server.address() as { port: number }).port;
  return {
    app,
    hub: hub!,
    origin: `http://127.0.0.1:${port}`,
    ws: `ws://127.0.0.1:${port}/ws`,
    async close() {
      await app.close();
      await redis.quit();
    },
  };
}

/**
 * A door between a client and Redis: cut() drops every connection through it and refuses new
 * ones until open(), so a test decides exactly how long a connection stays away.
 */
export class RedisDoor {
  private readonly sockets = new Set<net.Socket>();
  private shut = false;
  private constructor(
    private readonly server: net.Server,
    readonly url: string,
  ) {}

  static async open(redisUrl: string): Promise<RedisDoor> {
    const target = new URL(redisUrl);
    let door: RedisDoor | undefined;
    const server = net.createServer((client) => {
      if (door?.shut) return client.destroy();
      const upstream = net.connect(Number(target.port), target.hostname);
      for (const s of [client, upstream]) {
        door?.sockets.add(s);
        s.on('close', () => door?.sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as net.AddressInfo).port;
    door = new RedisDoor(server, `redis://127.0.0.1:${port}`);
    return door;
  }

  cut(): void {
    this.shut = true;
    for (const s of this.sockets) s.destroy();
  }

  reopen(): void {
    this.shut = false;
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A websocket client that keeps every text frame it receives, raw and parsed. */
export class WsClient {
  readonly raw: string[] = [];
  closed: { code: number; reason: string } | null = null;
  private constructor(readonly socket: WebSocket) {
    socket.on('message', (d) => this.raw.push(d.toString()));
    socket.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
    });
  }

  static async open(
    url: string,
    options: ConstructorParameters<typeof WebSocket>[2] = {},
    protocols: string[] = [],
  ): Promise<WsClient> {
    const socket = new WebSocket(url, protocols, options);
    const c = new WsClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return c;
  }

  get messages(): any[] {
    return this.raw.map((r) => JSON.parse(r));
  }

  /** Events ({k, m}) received so far. */
  get events(): any[] {
    return this.messages.filter((m) => 'k' in m);
  }

  /** Why no further frame can come (the socket closed), for a wait to fail at once. */
  readonly gone = (): string | undefined =>
    this.closed ? `the socket closed (${this.closed.code} ${this.closed.reason})` : undefined;

  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** Sends a frame and returns the raw text of the answer carrying the same _id. */
  async call(frame: Record<string, unknown>, timeoutMs = 5000): Promise<string> {
    const before = this.raw.length;
    this.send(frame);
    let found: string | undefined;
    await waitFor(
      `answer to ${JSON.stringify(frame)}`,
      () => {
        found = this.raw.slice(before).find((r) => {
          const m = JSON.parse(r);
          return !('k' in m) && JSON.stringify(m._id) === JSON.stringify(frame._id ?? null);
        });
        return found !== undefined;
      },
      { everyMs: 5, timeoutMs, gaveUp: this.gone },
    );
    return found!;
  }

  /** Sends a raw frame and returns the next frame received. */
  async next(frame: string | Record<string, unknown>, timeoutMs = 5000): Promise<string> {
    const before = this.raw.length;
    this.send(frame);
    await waitFor('a frame', () => this.raw.length > before, { everyMs: 5, timeoutMs, gaveUp: this.gone });
    return this.raw[before]!;
  }

  async subscribe(path: string, extra: Record<string, unknown> = {}): Promise<void> {
    const answer = JSON.parse(await this.call({ cmd: 'startConsuming', path, _id: `sub:${path}`, ...extra }));
    if (answer.code !== 200) throw new Error(`subscription refused: ${JSON.stringify(answer)}`);
  }

  close(): void {
    this.socket.close();
  }
}

export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/** An SSE stream read with node:http, parsed into events (comment lines kept apart). */
export class SseClient {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  text = '';
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  ended = false;
  private buf = '';
  private req: http.ClientRequest | null = null;
  res: http.IncomingMessage | null = null;

  static async open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const c = new SseClient();
    await new Promise<void>((resolve, reject) => {
      c.req = http.get(url, { headers }, (res) => {
        c.res = res;
        c.status = res.statusCode ?? 0;
        c.headers = res.headers;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => c.feed(chunk));
        res.on('end', () => {
          c.ended = true;
        });
        res.on('error', () => {
          c.ended = true;
        });
        resolve();
      });
      c.req.on('error', reject);
    });
    return c;
  }

  /** Why no further event can come (the stream ended), for a wait to fail at once. */
  readonly gone = (): string | undefined =>
    this.ended ? `the stream ended (status ${this.status})` : undefined;

  get uuid(): string {
    const h = this.events.find((e) => e.event === 'handshake');
    if (!h) throw new Error('no handshake yet');
    return h.data;
  }

  /** `event: event` messages, data parsed. */
  get data(): any[] {
    return this.events.filter((e) => e.event === 'event').map((e) => JSON.parse(e.data));
  }

  private feed(chunk: string): void {
    this.text += chunk;
    this.buf += chunk;
    for (let cut = this.buf.indexOf('\n\n'); cut >= 0; cut = this.buf.indexOf('\n\n')) {
      const block = this.buf.slice(0, cut);
      this.buf = this.buf.slice(cut + 2);
      const e: SseEvent = { event: 'message', data: '' };
      let any = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments.push(line);
          continue;
        }
        const colon = line.indexOf(': ');
        const [field, value] = colon < 0 ? [line, ''] : [line.slice(0, colon), line.slice(colon + 2)];
        any = true;
        if (field === 'event') e.event = value;
        else if (field === 'data') e.data = value;
        else if (field === 'id') e.id = value;
      }
      if (any) this.events.push(e);
    }
  }

  close(): void {
    this.req?.destroy();
  }
}

/** A plain HTTP request: status, content type and body. */
export async function request(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; type: string; body: string }> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() };
}
