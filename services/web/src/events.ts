// /ws, Buildbot's event protocol, with the resume Flotilla adds: every event carries an id,
// and after a reconnect the connection asks for what it missed (`?last_event_id=`), so a
// subscription sees every event exactly once across a dropped connection. When the missed
// events are no longer kept the server says `reload`, and the subscribers read again.
// Live log lines (`logs/<id>/lines`) are not resumable: their subscribers hear `reconnected`
// and read the gap over REST.

export type EventHandler = (e: { key: string; message: unknown } | { reload: true }) => void;
export type SocketState = 'connecting' | 'live' | 'reconnecting';

interface Sub {
  path: string;
  parts: (string | null)[];
  handlers: Set<EventHandler>;
}

const RETRY_MS = [250, 500, 1000, 2000, 4000];

export class EventSocket {
  private ws: WebSocket | null = null;
  private readonly subs = new Map<string, Sub>();
  private lastId: string | null = null;
  private nextId = 1;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly stateListeners = new Set<(s: SocketState) => void>();
  private readonly reconnectListeners = new Set<() => void>();
  state: SocketState = 'connecting';
  /** How many times the connection came back (shown to tests and people alike). */
  reconnects = 0;

  constructor(private readonly url: () => string) {}

  start(): void {
    this.open();
  }

  /** A new connection (after a login or logout: the server learns who we are when we connect). */
  restart(): void {
    const ws = this.ws;
    this.ws = null;
    ws?.close();
    this.open();
  }

  onState(fn: (s: SocketState) => void): () => void {
    this.stateListeners.add(fn);
    return () => this.stateListeners.delete(fn);
  }

  onReconnect(fn: () => void): () => void {
    this.reconnectListeners.add(fn);
    return () => this.reconnectListeners.delete(fn);
  }

  subscribe(path: string, handler: EventHandler): () => void {
    let sub = this.subs.get(path);
    if (!sub) {
      sub = { path, parts: path.split('/').map((p) => (p === '*' ? null : p)), handlers: new Set() };
      this.subs.set(path, sub);
      this.send({ cmd: 'startConsuming', path });
    }
    sub.handlers.add(handler);
    return () => {
      const s = this.subs.get(path);
      if (!s) return;
      s.handlers.delete(handler);
      if (s.handlers.size === 0) {
        this.subs.delete(path);
        this.send({ cmd: 'stopConsuming', path });
      }
    };
  }

  private setState(s: SocketState): void {
    this.state = s;
    for (const fn of this.stateListeners) fn(s);
  }

  private send(frame: Record<string, unknown>): void {
    if (this.ws?.readyState === WebSocket.OPEN)
      this.ws.send(JSON.stringify({ ...frame, _id: this.nextId++ }));
  }

  private open(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const url =
      this.lastId === null ? this.url() : `${this.url()}?last_event_id=${encodeURIComponent(this.lastId)}`;
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws !== ws) return;
      const again = this.attempt > 0;
      this.attempt = 0;
      // The opening startConsuming frames get last_event_id's `since`: missed events come first.
      for (const path of this.subs.keys()) this.send({ cmd: 'startConsuming', path });
      this.setState('live');
      if (again) {
        this.reconnects++;
        for (const fn of this.reconnectListeners) fn();
      }
    };
    ws.onmessage = (m) => {
      if (this.ws !== ws) return;
      let frame: Record<string, unknown>;
      try {
        frame = JSON.parse(String(m.data)) as Record<string, unknown>;
      } catch {
        return;
      }
      if (typeof frame.k === 'string') {
        if (typeof frame.id === 'string') this.lastId = frame.id;
        this.dispatch(frame.k, frame.m);
      } else if (frame.cmd === 'reload' && typeof frame.path === 'string') {
        for (const h of this.subs.get(frame.path)?.handlers ?? []) h({ reload: true });
      }
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.setState('reconnecting');
      const delay = RETRY_MS[Math.min(this.attempt, RETRY_MS.length - 1)]!;
      this.attempt++;
      this.timer = setTimeout(() => this.open(), delay);
    };
  }

  private dispatch(key: string, message: unknown): void {
    const parts = key.split('/');
    // As the server: live log lines reach only their exact path, never a wildcard.
    if (parts.length === 3 && parts[0] === 'logs' && parts[2] === 'lines') {
      for (const h of this.subs.get(key)?.handlers ?? []) h({ key, message });
      return;
    }
    for (const sub of this.subs.values()) {
      if (sub.parts.length !== parts.length) continue;
      if (sub.parts.every((p, i) => p === null || p === parts[i])) {
        for (const h of sub.handlers) h({ key, message });
      }
    }
  }
}

export const events = new EventSocket(() => {
  const u = new URL('ws', document.baseURI);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.hash = '';
  return u.toString();
});
