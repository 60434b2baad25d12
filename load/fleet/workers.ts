// A fleet of generated workers in one process: many WebSocket connections to masters, each
// speaking Flotilla's worker protocol as services/worker's agent does (hello with name,
// password and slots; the master's welcome; its commands; output in numbered batches; the
// outcome), and answering every command as a shell step running `true` would: the header
// the agent writes around a command, exit code 0, done. A thousand real agents would be a
// thousand Node processes and a thousand `sh` forks a second; this is the protocol's cost
// alone, which is what a master's scale is about (issue 35 §1).
//
// test/e2e/fleet-workers.test.ts runs one build on services/worker's agent and one on this
// fleet against the same real master and checks that the master stored the same steps,
// results and logs (the header's environment and elapsed time aside, which differ between
// any two runs of the agent too).
import { resolve } from 'node:path';
import WebSocket from 'ws';
import {
  type CommandRequest,
  type MasterToWorker,
  PROTOCOL_VERSION,
  parseMasterMessage,
  type WorkerToMaster,
} from '../../services/core/protocol/messages.js';

export interface FleetWorker {
  name: string;
  password: string;
  /** ws://host:port/worker of the master this worker connects to. */
  url: string;
}

export interface FleetOptions {
  workers: readonly FleetWorker[];
  maxBuilds?: number;
  /** Absolute; what the header names as a command's directory (the agent's WORKER_DIR). */
  basedir: string;
  /** The environment the header shows; the agent's own minus its variables. */
  env?: Record<string, string>;
  /** Every command a master starts here, when it came (performance.timeOrigin + now()). */
  onCommand?: (worker: string, request: CommandRequest, atMs: number) => void;
}

const RETRY_MS = 250;
const MAX_RETRY_MS = 5000;

/** The text the agent's header shows for a command (services/worker/command.ts's headerLines). */
function pyRepr(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
}

/**
 * What the agent sends for a command that succeeds at once with no output: one batch of
 * header text (the agent batches text of one stream for 10 ms, and `true` ends well within
 * it) and the outcome.
 */
export function trueAnswer(
  cmd: string,
  request: CommandRequest,
  basedir: string,
  env: Record<string, string>,
): WorkerToMaster[] {
  const dir = resolve(basedir, request.workdir);
  const shown: Record<string, string> = { ...env };
  for (const [k, v] of Object.entries(request.env ?? {})) {
    if (v === null) delete shown[k];
    else shown[k] = v;
  }
  shown.PWD = dir;
  const argv = typeof request.command === 'string' ? null : request.command;
  const lines = [
    argv ? argv.join(' ') : (request.command as string),
    ` in dir ${dir} (timeout ${request.timeout ?? 1200} secs)`,
    ' watching logfiles {}',
    argv ? ` argv: [${argv.map(pyRepr).join(', ')}]` : ` argv: b${pyRepr(request.command as string)}`,
    ' environment:',
    ...Object.keys(shown)
      .sort()
      .map((k) => `  ${k}=${shown[k]}`),
    ' using PTY: False',
    'program finished with exit code 0',
    'elapsedTime=0.000000',
  ];
  return [
    { type: 'output', cmd, seq: 1, stream: 'h', text: `${lines.join('\n')}\n` },
    {
      type: 'done',
      cmd,
      outcome: { rc: 0, signal: null, interrupted: false, timedOut: false, elapsedSeconds: 0 },
    },
  ];
}

export class WorkerFleet {
  /** Workers welcomed by their master now. */
  connected = 0;
  commands = 0;
  /**
   * While true, a command's answer is held back until release(): every build runs as long
   * as a step that sleeps (the start burst, burst.ts). Its header too, which the agent sends
   * at once: the header's log writes are a step's output, not a build's start, and the
   * burst measures starts alone.
   */
  holding = false;
  private readonly held: (() => boolean)[] = [];
  private closing = false;
  private readonly sockets = new Set<WebSocket>();
  private readonly env: Record<string, string>;

  constructor(private readonly opts: FleetOptions) {
    this.env = opts.env ?? {};
  }

  /** Workers whose connection start() has opened so far, in the order given. */
  private opened = 0;

  /**
   * Opens the connections of the workers not opened yet, all at once (each retries until its
   * master listens); `upTo`: only those before that index of the list.
   */
  start(upTo = this.opts.workers.length): void {
    for (; this.opened < Math.min(upTo, this.opts.workers.length); this.opened++)
      this.open(this.opts.workers[this.opened]!, 0);
  }

  private open(w: FleetWorker, attempt: number): void {
    if (this.closing) return;
    const ws = new WebSocket(w.url, { handshakeTimeout: 30_000 });
    this.sockets.add(ws);
    let welcomed = false;
    const send = (m: WorkerToMaster) => ws.send(JSON.stringify(m));
    ws.on('open', () =>
      send({
        type: 'hello',
        protocol: PROTOCOL_VERSION,
        name: w.name,
        password: w.password,
        info: { admin: '', host: 'fleet', access_uri: '', version: 'flotilla-fleet 0.1.0' },
        ...(this.opts.maxBuilds ? { maxBuilds: this.opts.maxBuilds } : {}),
        basedir: this.opts.basedir,
      }),
    );
    ws.on('message', (data) => {
      const m: MasterToWorker | null = parseMasterMessage(data.toString());
      if (!m) return;
      if (m.type === 'welcome') {
        welcomed = true;
        this.connected++;
      } else if (m.type === 'start') {
        this.commands++;
        this.opts.onCommand?.(w.name, m.request, performance.timeOrigin + performance.now());
        const answer = trueAnswer(m.cmd, m.request, this.opts.basedir, this.env);
        if (!this.holding) for (const out of answer) send(out);
        else
          this.held.push(() => {
            if (ws.readyState !== WebSocket.OPEN) return false;
            for (const out of answer) send(out);
            return true;
          });
      } else if (m.type === 'transfer') {
        // No file is ever there: the agent's answer to an upload of a missing file.
        send({
          type: 'done',
          cmd: m.cmd,
          outcome: { rc: 1, signal: null, interrupted: false, timedOut: false, elapsedSeconds: 0 },
        });
      }
      // An ack or an interrupt finds nothing running: every command ended as it started.
    });
    ws.on('close', () => {
      this.sockets.delete(ws);
      if (welcomed) this.connected--;
      if (this.closing) return;
      const delay = Math.min(MAX_RETRY_MS, RETRY_MS * 2 ** attempt) * (0.5 + Math.random() / 2);
      setTimeout(() => this.open(w, welcomed ? 0 : attempt + 1), delay).unref();
    });
    ws.on('error', () => {});
  }

  /**
   * Ends every held command (as `true` ends) and holds no more. Returns how many answers went
   * out and how many were dropped because their connection had closed since the command came
   * (its master ends that build as a lost worker's): a wait for the held builds that never ends
   * (seen once, 2026-11-29 08:55) then says which side kept them.
   */
  release(): { sent: number; dropped: number } {
    this.holding = false;
    let sent = 0;
    let dropped = 0;
    for (const end of this.held.splice(0)) end() ? sent++ : dropped++;
    return { sent, dropped };
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(
      [...this.sockets].map(
        (ws) =>
          new Promise<void>((done) => {
            if (ws.readyState === WebSocket.CLOSED) return done();
            ws.once('close', () => done());
            ws.terminate();
          }),
      ),
    );
  }
}
