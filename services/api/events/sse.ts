// /sse, Buildbot's server-sent events (www/sse.py). GET /sse/listen[/<path>] opens a stream
// (text/event-stream) that starts with `event: handshake` / `data: <uuid>` and then carries
// `event: event` / `data: {"key": [...], "message": {...}}` (Python's default separators);
// /sse/add/<uuid>/<path> and /sse/remove/<uuid>/<path> change what the stream <uuid> gets,
// answering `ok`. A path not under listen, add or remove is listened to, as Buildbot does.
//
// Across pods: the stream lives on the pod that accepted the listen, but add and remove may
// reach any pod. Each stream's owner is recorded in Redis (flotilla:events:sse:<uuid>, pod
// id, expiring unless the owner refreshes it), and a pod that does not hold the stream
// forwards the command to the owner's pod channel and relays its answer.
//
// Ours on top (README.md): `id: <event id>` on every event, the Last-Event-ID header (or
// ?last_event_id=) to resume a listen path, `event: reload`, `: ping` comment lines, slow
// streams ended with `event: disconnect`, and sane answers where Buildbot crashes (an unknown
// uuid is a 404 `unknown uuid`, not a 500 page).
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { tooManyConnections } from '../errors/catalogue.js';
import { sendError } from '../errors/reply.js';
import { Consumer } from './consumer.js';
import { type EventHub, podChannel } from './hub.js';
import { pyDumpsOrdered } from './pyjson.js';
import type { HubEvent, UserInfo } from './types.js';

interface Answer {
  status: number;
  body: string;
}

const OK: Answer = { status: 200, body: 'ok' };
const UNKNOWN_UUID: Answer = { status: 404, body: 'unknown uuid' };
// How long a pod waits for the pod holding a stream to answer a forwarded add or remove.
const FORWARD_TIMEOUT_MS = 3000;

const ownerKey = (uuid: string) => `flotilla:events:sse:${uuid}`;

export class SseConsumer extends Consumer {
  constructor(
    hub: EventHub,
    user: UserInfo,
    readonly uuid: string,
    private readonly res: ServerResponse,
    private readonly router: SseRouter,
  ) {
    super(hub, user);
  }

  heartbeat(): void {
    this.write(': ping\n\n');
    this.router.refresh(this);
  }

  override release(): void {
    if (this.closed) return;
    super.release();
    this.router.forget(this);
  }

  /** Ends the stream for the server's own reasons (shutdown). */
  close(): void {
    this.release();
    this.res.end();
  }

  protected send(frame: Buffer | string): void {
    this.res.write(frame);
  }

  protected buffered(): number {
    return this.res.writableLength;
  }

  protected eventFrame(e: HubEvent): Buffer {
    e.frames.sse ??= Buffer.from(
      `event: event\ndata: ${pyDumpsOrdered({ key: e.parts, message: e.message }, 'default')}\n` +
        (e.id === undefined ? '\n' : `id: ${e.id}\n\n`),
    );
    return e.frames.sse;
  }

  protected reloadFrame(path: string, reason: string): string {
    return `event: reload\ndata: ${pyDumpsOrdered({ path, reason }, 'default')}\n\n`;
  }

  protected end(reason: string): void {
    this.res.end(`event: disconnect\ndata: ${pyDumpsOrdered({ reason }, 'default')}\n\n`);
    setTimeout(() => this.res.destroy(), 10_000).unref();
  }
}

/** Where each stream lives, and add/remove wherever the stream is. */
export class SseRouter {
  private readonly local = new Map<string, SseConsumer>();
  private readonly waiting = new Map<string, (a: Answer) => void>();
  private readonly ttlSeconds: number;

  constructor(
    private readonly hub: EventHub,
    /** Counts a stream against its client's connections; false: the client holds too many. */
    private readonly admit: (req: FastifyRequest) => boolean = () => true,
  ) {
    this.ttlSeconds = Math.max(60, Math.ceil((3 * hub.settings.pingIntervalMs) / 1000));
    hub.onPodMessages((msg) => this.onPodMessage(msg as Record<string, unknown>));
  }

  streams(): SseConsumer[] {
    return [...this.local.values()];
  }

  /** GET /sse..., every command. */
  async handle(req: FastifyRequest, reply: FastifyReply, user: UserInfo): Promise<FastifyReply | undefined> {
    let path = ssePath(req.raw.url ?? '');
    let command = 'listen';
    if (path.length > 0 && ['listen', 'add', 'remove'].includes(path[0]!)) {
      command = path[0]!;
      path = path.slice(1);
    }
    if (command === 'listen') return this.listen(req, reply, user, path);
    if (path.length === 0) return text(reply, { status: 400, body: 'need uuid' });
    const [uuid, ...rest] = path as [string, ...string[]];
    return text(reply, await this.command(command as 'add' | 'remove', uuid, rest.join('/')));
  }

  refresh(c: SseConsumer): void {
    this.hub.redis.set(ownerKey(c.uuid), this.hub.podId, 'EX', this.ttlSeconds).catch(() => {});
  }

  forget(c: SseConsumer): void {
    this.local.delete(c.uuid);
    this.hub.redis.del(ownerKey(c.uuid)).catch(() => {});
  }

  private listen(
    req: FastifyRequest,
    reply: FastifyReply,
    user: UserInfo,
    path: string[],
  ): FastifyReply | undefined {
    if (!this.admit(req)) return sendError(req, reply, tooManyConnections());
    const uuid = randomUUID();
    reply.hijack();
    const res = reply.raw;
    // Headers the hooks set (cookies, rate limits) go out with the stream's own.
    res.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string | string[]>),
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
    res.socket?.setKeepAlive(true, this.hub.settings.pingIntervalMs);
    res.write(`event: handshake\ndata: ${uuid}\n\n`);
    const consumer = new SseConsumer(this.hub, user, uuid, res, this);
    consumer.sessionId = req.sessionId ?? null;
    this.local.set(uuid, consumer);
    this.refresh(consumer);
    res.on('close', () => consumer.release());
    res.on('error', () => consumer.release());
    if (path.length > 0) consumer.subscribe(path.join('/'), resumeFrom(req));
    return undefined;
  }

  private async command(op: 'add' | 'remove', uuid: string, path: string): Promise<Answer> {
    const mine = this.local.get(uuid);
    if (mine) return apply(mine, op, path);
    const owner = await this.hub.redis.get(ownerKey(uuid));
    if (!owner || owner === this.hub.podId) return UNKNOWN_UUID;
    const rid = randomUUID();
    const answer = new Promise<Answer>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(rid);
        resolve(UNKNOWN_UUID);
      }, FORWARD_TIMEOUT_MS);
      this.waiting.set(rid, (a) => {
        clearTimeout(timer);
        this.waiting.delete(rid);
        resolve(a);
      });
    });
    await this.hub.redis.publish(
      podChannel(owner),
      JSON.stringify({ rid, from: this.hub.podId, op, uuid, path }),
    );
    return answer;
  }

  private onPodMessage(msg: Record<string, unknown>): void {
    const rid = String(msg.rid);
    if (msg.answer) {
      this.waiting.get(rid)?.(msg.answer as Answer);
      return;
    }
    const c = this.local.get(String(msg.uuid));
    const op = msg.op === 'remove' ? 'remove' : 'add';
    const answer = c ? apply(c, op, String(msg.path)) : UNKNOWN_UUID;
    this.hub.redis.publish(podChannel(String(msg.from)), JSON.stringify({ rid, answer })).catch(() => {});
  }
}

function apply(c: SseConsumer, op: 'add' | 'remove', path: string): Answer {
  if (op === 'remove') {
    return c.unsubscribe(path) ? OK : { status: 404, body: 'consumer is not listening to this event' };
  }
  const result = c.subscribe(path, null);
  if (result === 'too many') return { status: 400, body: 'too many subscriptions' };
  if (result === 'too many logs') return { status: 400, body: 'too many log line subscriptions' };
  return OK;
}

function text(reply: FastifyReply, a: Answer): FastifyReply {
  return reply.code(a.status).type('text/plain; charset=utf-8').send(a.body);
}

/** The path elements after /sse, each percent-decoded, without one trailing empty element. */
function ssePath(url: string): string[] {
  const raw = url.split('?')[0]!.replace(/^\/sse\/?/, '');
  if (raw === '') return [];
  const parts = raw.split('/').map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  if (parts.at(-1) === '') parts.pop();
  return parts;
}

/** The Last-Event-ID header, or ?last_event_id= (a first EventSource connection cannot set headers). */
function resumeFrom(req: FastifyRequest): string | null {
  const header = req.headers['last-event-id'];
  if (typeof header === 'string' && header !== '') return header;
  const q = (req.query as Record<string, unknown> | undefined)?.last_event_id;
  return typeof q === 'string' && q !== '' ? q : null;
}
