// /ws, Buildbot's websocket protocol (www/ws.py): JSON text frames; startConsuming,
// stopConsuming and ping, each with an `_id` echoed in its answer; events as {"k","m"}; the
// answers and errors in Buildbot's shapes and words, compact and in insertion order.
//
// Ours on top (services/api/events/README.md): every event also carries its "id"; a
// startConsuming may carry "since" (an event id) to receive first the matching events it
// missed, and /ws?last_event_id=<id> gives that "since" to the connection's opening
// startConsuming frames; a reload frame when the missed events are no longer kept; ping
// frames from the server; slow clients disconnected. Frames with `type` are the graphql-ws
// protocol Buildbot also accepts there: its handshake is answered, but GraphQL itself (off by
// default in Buildbot 3.7) is not served.
import type { RawData, WebSocket } from 'ws';
import { closeReason } from '../../core/http/close-reason.js';
import { Consumer } from './consumer.js';
import type { EventHub } from './hub.js';
import { pyDumpsOrdered, pyStr } from './pyjson.js';
import type { HubEvent, UserInfo } from './types.js';

type Frame = Record<string, unknown>;

/** The keyword arguments of each command's Python method, and which are required. */
const COMMANDS: Record<string, { params: readonly string[]; required: readonly string[]; method: string }> = {
  startConsuming: {
    params: ['path', '_id', 'since'],
    required: ['path'],
    method: 'WsProtocol.cmd_startConsuming',
  },
  stopConsuming: { params: ['path', '_id'], required: ['path'], method: 'WsProtocol.cmd_stopConsuming' },
  ping: { params: ['_id'], required: [], method: 'WsProtocol.cmd_ping' },
};

/** What Python's TypeError says when a frame's keys do not fit the method (or null if they do). */
function argumentError(frame: Frame, spec: (typeof COMMANDS)[string]): string | null {
  for (const k of Object.keys(frame)) {
    if (!spec.params.includes(k)) return `${spec.method}() got an unexpected keyword argument '${k}'`;
  }
  const missing = spec.required.filter((p) => !(p in frame));
  if (missing.length === 0) return null;
  return `${spec.method}() missing 1 required positional argument: '${missing[0]}'`;
}

function frameText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}

const MISSED_PINGS_TO_DROP = 2;

export class WsConsumer extends Consumer {
  private mode: 'buildbot' | 'graphql' | null;
  /** /ws?last_event_id: the `since` of startConsuming frames until another command comes. */
  private openingSince: string | null;
  /** Pings sent since the last pong. */
  private unanswered = 0;

  constructor(
    hub: EventHub,
    user: UserInfo,
    private readonly ws: WebSocket,
    lastEventId: string | null,
  ) {
    super(hub, user);
    this.mode = ws.protocol === 'graphql-ws' ? 'graphql' : null;
    this.openingSince = lastEventId;
    ws.on('message', (data) => this.onFrame(frameText(data)));
    ws.on('pong', () => {
      this.unanswered = 0;
    });
    ws.on('close', () => this.release());
  }

  // Dropped once two pings in a row went unanswered, not one: after a pause of the pod's own
  // (a long GC, a starved CPU), the timers run before the socket reads that waited, so a pong
  // that had arrived in time was not yet seen, and a live client was dropped (CI at load 19,
  // test/api/events/features.test.ts, 2026-11-29 16:10). A dead client goes after two to
  // three intervals instead of one to two.
  heartbeat(): void {
    if (this.unanswered >= MISSED_PINGS_TO_DROP) {
      this.release();
      this.hub.log.info('events client dropped: no pong');
      this.ws.terminate();
      return;
    }
    this.unanswered++;
    this.ws.ping();
  }

  /** Closes the connection for the server's own reasons (shutdown). */
  close(code: number, reason: string): void {
    this.release();
    this.ws.close(code, reason);
  }

  protected send(frame: Buffer | string): void {
    this.ws.send(frame, { binary: false });
  }

  protected buffered(): number {
    return this.ws.bufferedAmount;
  }

  protected eventFrame(e: HubEvent): Buffer {
    e.frames.ws ??= Buffer.from(
      pyDumpsOrdered(
        e.id === undefined ? { k: e.key, m: e.message } : { k: e.key, m: e.message, id: e.id },
        'compact',
      ),
    );
    return e.frames.ws;
  }

  protected reloadFrame(path: string, reason: string): string {
    return pyDumpsOrdered({ cmd: 'reload', path, reason }, 'compact');
  }

  protected end(reason: string): void {
    // The close frame follows what is queued; a client that never reads it is cut off.
    this.ws.close(1008, closeReason(reason));
    setTimeout(() => this.ws.terminate(), 10_000).unref();
  }

  /** An error in the shape of the protocol the connection speaks. */
  private error(error: string, code: number, _id: unknown): Frame {
    return this.mode === 'graphql' ? { message: error, type: 'error', id: _id } : { error, code, _id };
  }

  onFrame(text: string): void {
    this.write(pyDumpsOrdered(this.answer(text), 'compact'));
  }

  /** What a frame asks, done; the answer to send. */
  private answer(text: string): Frame {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return this.error('invalid JSON in websocket frame', 400, null);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return this.error('websocket frame is not a JSON object', 400, null);
    }
    const frame = { ...(parsed as Frame) };
    const _id = frame._id ?? null;
    const type = frame.type ?? null;
    delete frame.type;
    if (_id === null && type === null) return this.error("no '_id' or 'type' in websocket frame", 400, null);
    if (type !== null) return this.graphqlAnswer(type, frame, _id);
    if (this.mode === 'graphql') {
      return this.error("missing 'type' in websocket frame when already started using graphql", 400, null);
    }
    this.mode = 'buildbot';
    const cmd = frame.cmd ?? null;
    delete frame.cmd;
    if (cmd === null) return this.error("no 'cmd' in websocket frame", 400, null);
    if (cmd !== 'startConsuming') this.openingSince = null;
    const spec = typeof cmd === 'string' && Object.hasOwn(COMMANDS, cmd) ? COMMANDS[cmd] : undefined;
    if (!spec) return this.error(`no such command type '${pyStr(cmd)}'`, 404, _id);
    const bad = argumentError(frame, spec);
    if (bad) return this.error(`Invalid method argument '${bad}'`, 400, _id);
    if (cmd === 'ping') return { msg: 'pong', code: 200, _id };
    const path = frame.path;
    if (typeof path !== 'string') return this.error(`invalid path format '${pyStr(path)}'`, 400, _id);
    if (cmd === 'stopConsuming') {
      if (!this.unsubscribe(path)) return this.error(`path was not consumed '${path}'`, 400, _id);
      return { msg: 'OK', code: 200, _id };
    }
    const since = frame.since ?? this.openingSince;
    if (since !== null && typeof since !== 'string') {
      return this.error(`invalid event id '${pyStr(since)}'`, 400, _id);
    }
    // A replay starts after this answer is sent: its first step waits for Redis.
    const result = this.subscribe(path, since);
    if (result === 'too many') {
      return this.error(`too many subscriptions (at most ${this.hub.settings.maxSubscriptions})`, 400, _id);
    }
    if (result === 'too many logs') {
      const max = this.hub.settings.maxLogSubscriptions;
      return this.error(`too many log line subscriptions (at most ${max})`, 400, _id);
    }
    return { msg: 'OK', code: 200, _id };
  }

  private graphqlAnswer(type: unknown, frame: Frame, _id: unknown): Frame {
    if (this.mode === 'buildbot') {
      return this.error(
        "using 'type' in websocket frame when already started using buildbot protocol",
        400,
        null,
      );
    }
    this.mode = 'graphql';
    if (type === 'connection_init') return { type: 'connection_ack' };
    if (type === 'start') return this.error('graphql is not served here', 400, frame.id ?? null);
    if (type === 'stop') return this.error('stopping unknown subscription', 400, frame.id ?? null);
    return this.error(`no such command type '${pyStr(type)}'`, 404, _id);
  }
}
