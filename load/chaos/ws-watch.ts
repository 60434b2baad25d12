// /ws clients that follow the cluster through a fault, as the web UI does: each subscribes to
// the builds' and the logs' events on one of the APIs (in turn) and keeps what it receives,
// with the time. After the fault a client must either go on receiving, without a hole it
// was not told of, or be told to reload (a `reload` frame: the events it missed are gone).
// What is judged, once every build has finished:
// - resumed: the client received an event published after the fault (its stream id, the
//   Redis clock's milliseconds, is later than the fault) and every build's `finished` event;
// - told to reload: it received a reload frame after the fault;
// - neither: the client is stuck, showing what it showed before the fault (counted as lost).
// A client whose connection closed is reopened as a browser would; the closes are counted.
import WebSocket from 'ws';

export interface WsClientOutcome {
  /** The API it followed. */
  api: string;
  events: number;
  reloads: number;
  closes: number;
  /** Builds whose `finished` event it received. */
  finished: number;
  /** Seconds from the fault to its first event published after the fault (null: none). */
  resumedAfter: number | null;
  /** Seconds from the fault to its first reload frame after it (null: none). */
  reloadedAfter: number | null;
  verdict: 'resumed' | 'reloaded' | 'lost';
}

export interface WsOutcome {
  clients: WsClientOutcome[];
  resumed: number;
  reloaded: number;
  lost: number;
  /** Seconds until the last client resumed or was told to reload (null: one never did). */
  allBackAfter: number | null;
}

const SUBSCRIPTIONS = ['builds/*/*', 'logs/*/*'];

class Client {
  events = 0;
  reloads: number[] = [];
  closes = 0;
  /** Receive times (ms) of events, with their stream id's time. */
  firstAfter: number | null = null;
  finished = new Set<number>();
  private socket: WebSocket | null = null;
  private stopped = false;
  private faultAt = Number.POSITIVE_INFINITY;

  constructor(readonly url: string) {}

  open(): Promise<void> {
    return new Promise((resolve) => {
      const s = new WebSocket(this.url);
      this.socket = s;
      let id = 0;
      s.on('open', () => {
        for (const path of SUBSCRIPTIONS) s.send(JSON.stringify({ cmd: 'startConsuming', path, _id: ++id }));
        resolve();
      });
      s.on('message', (data) => this.receive(String(data)));
      s.on('error', () => {});
      s.on('close', () => {
        resolve();
        if (this.stopped) return;
        this.closes++;
        setTimeout(() => void this.open(), 500);
      });
    });
  }

  fault(at: number): void {
    this.faultAt = at;
  }

  private receive(text: string): void {
    let m: { k?: string; id?: string; cmd?: string };
    try {
      m = JSON.parse(text);
    } catch {
      return;
    }
    const now = Date.now();
    if (m.cmd === 'reload') {
      if (now >= this.faultAt) this.reloads.push(now);
      return;
    }
    if (typeof m.k !== 'string') return;
    this.events++;
    const f = /^builds\/(\d+)\/finished$/.exec(m.k);
    if (f) this.finished.add(Number(f[1]));
    const published = typeof m.id === 'string' ? Number(m.id.split('-')[0]) : Number.NaN;
    if (this.firstAfter === null && published > this.faultAt) this.firstAfter = now;
  }

  close(): void {
    this.stopped = true;
    this.socket?.close();
  }
}

export class WsWatch {
  private readonly clients: Client[] = [];
  private faultAt = 0;

  /** `count` clients, spread over the APIs' /ws in turn. */
  async open(apiOrigins: readonly string[], count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const origin = apiOrigins[i % apiOrigins.length]!;
      const c = new Client(`${origin.replace(/^http/, 'ws')}/ws`);
      this.clients.push(c);
      await c.open();
    }
  }

  fault(at: number): void {
    this.faultAt = at;
    for (const c of this.clients) c.fault(at);
  }

  /** The verdicts, given the ids of the builds that finished. */
  judge(buildids: readonly number[]): WsOutcome {
    const secs = (t: number | null | undefined) => (t == null ? null : (t - this.faultAt) / 1000);
    const clients = this.clients.map((c): WsClientOutcome => {
      const finished = buildids.filter((b) => c.finished.has(b)).length;
      const resumed = c.firstAfter !== null && finished === buildids.length;
      const reloaded = c.reloads.length > 0;
      return {
        api: c.url,
        events: c.events,
        reloads: c.reloads.length,
        closes: c.closes,
        finished,
        resumedAfter: secs(c.firstAfter),
        reloadedAfter: secs(c.reloads[0]),
        verdict: reloaded ? 'reloaded' : resumed ? 'resumed' : 'lost',
      };
    });
    const back = clients.map((c) =>
      c.verdict === 'lost' ? null : Math.min(c.resumedAfter ?? Infinity, c.reloadedAfter ?? Infinity),
    );
    return {
      clients,
      resumed: clients.filter((c) => c.verdict === 'resumed').length,
      reloaded: clients.filter((c) => c.verdict === 'reloaded').length,
      lost: clients.filter((c) => c.verdict === 'lost').length,
      allBackAfter:
        back.some((b) => b === null) || back.length === 0 ? null : Math.max(...(back as number[])),
    };
  }

  close(): void {
    for (const c of this.clients) c.close();
  }
}
