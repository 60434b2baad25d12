// The master-worker protocol: JSON text frames over one WebSocket, typed once for both sides.
// The worker speaks first (hello); the master answers welcome or closes the socket with one
// of the close codes below. Then the master starts commands; the worker streams their output
// in numbered batches, each acknowledged only once the master has stored it, and the worker
// holds back output while too much is unacknowledged; at the end it reports how the
// command finished.

export const PROTOCOL_VERSION = 1;
export const WORKER_PATH = '/worker';

export const CloseCode = {
  normal: 1000,
  goingAway: 1001,
  badHello: 4000,
  badCredentials: 4001,
  alreadyConnected: 4002,
  protocolVersion: 4003,
  badMessage: 4004,
  /** An operator's stop or kill (Buildbot's worker shutdown): the worker exits, it does not come back. */
  shutdown: 4005,
  /** Too many failed logins from this address: refused unchecked until the window ends. */
  throttled: 4006,
} as const;

export interface WorkerInfo {
  admin: string;
  host: string;
  access_uri: string;
  version: string;
}

export type OutputStream = 'o' | 'e' | 'h';

export interface CommandRequest {
  command: string | string[];
  /** Relative to the worker's base directory. */
  workdir: string;
  env?: Record<string, string | null>;
  timeout?: number;
  maxTime?: number;
  /**
   * Extra logs: log name -> a file (relative to workdir) that the worker follows while the
   * command runs, as Buildbot's worker does: once it changes from how it was when the command
   * started, its contents (only what was added since the start, with `follow`) come as output
   * of that log.
   */
  logfiles?: Record<string, { filename: string; follow: boolean }>;
  /** The signal an interrupt sends (without SIG; default KILL). */
  interruptSignal?: string;
  /** Seconds between SIGTERM and interruptSignal when interrupting; unset: interruptSignal at once. */
  sigtermTime?: number;
}

export interface CommandOutcome {
  rc: number | null;
  signal: string | null;
  interrupted: boolean;
  timedOut: boolean;
  elapsedSeconds: number;
}

/**
 * A file transfer, as buildbot-worker's upload_file, upload_directory and download_file: a
 * file (or a directory, as a tar archive, gzipped or bzipped with compress) from the worker in blocks, or a file to it. Paths
 * are relative to the worker's base directory. Past `maxsize` bytes the transfer stops with
 * rc 1 (what was sent stays sent, as Buildbot's worker truncates); `mode` is the downloaded
 * file's permission bits.
 */
export interface TransferRequest {
  op: 'upload' | 'upload-directory' | 'download';
  path: string;
  maxsize?: number | null;
  blocksize?: number;
  mode?: number | null;
  compress?: 'gz' | 'bz2' | null;
}

export type WorkerToMaster =
  | {
      type: 'hello';
      protocol: number;
      name: string;
      password: string;
      info: WorkerInfo;
      maxBuilds?: number;
      /** The worker's base directory, absolute: the master makes the `builddir` property of it. */
      basedir?: string;
    }
  | { type: 'output'; cmd: string; seq: number; stream: OutputStream; text: string; log?: string }
  /** A block of an upload (base64), acknowledged like output. */
  | { type: 'data'; cmd: string; seq: number; data: string }
  /** A block of a download is written. */
  | { type: 'ack'; cmd: string; seq: number }
  | { type: 'done'; cmd: string; outcome: CommandOutcome };

export type MasterToWorker =
  /**
   * silenceMs: a worker that hears nothing from this master for that long (no message, no
   * answer to its pings) kills the master's commands at once: the master may be frozen or
   * cut off, and the cluster will run its requests elsewhere (services/master/liveness.ts).
   */
  | { type: 'welcome'; master: string; protocol: number; silenceMs?: number }
  | {
      type: 'start';
      cmd: string;
      request: CommandRequest;
      /** W3C trace context (traceparent, tracestate) of the step that runs the command. */
      trace?: Record<string, string>;
    }
  | { type: 'transfer'; cmd: string; request: TransferRequest }
  /** A block of a download (base64); `eof` after the last. */
  | { type: 'data'; cmd: string; seq: number; data: string; eof?: boolean }
  /** kill: at once, without the grace an interrupt gives (the request may run elsewhere now). */
  | { type: 'interrupt'; cmd: string; reason: string; kill?: boolean }
  | { type: 'ack'; cmd: string; seq: number };

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown) => typeof v === 'string';
const num = (v: unknown) => typeof v === 'number' && Number.isFinite(v);

function parse(text: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text);
    return isObj(v) ? v : null;
  } catch {
    return null;
  }
}

/** A worker's frame, checked field by field; null for anything malformed. */
export function parseWorkerMessage(text: string): WorkerToMaster | null {
  const o = parse(text);
  if (!o) return null;
  switch (o.type) {
    case 'hello': {
      if (!str(o.name) || !str(o.password) || !num(o.protocol)) return null;
      const info = isObj(o.info) ? o.info : {};
      const s = (k: string) => (str(info[k]) ? (info[k] as string) : '');
      return {
        type: 'hello',
        protocol: o.protocol as number,
        name: o.name as string,
        password: o.password as string,
        info: { admin: s('admin'), host: s('host'), access_uri: s('access_uri'), version: s('version') },
        ...(num(o.maxBuilds) ? { maxBuilds: o.maxBuilds as number } : {}),
        ...(str(o.basedir) && o.basedir ? { basedir: o.basedir as string } : {}),
      };
    }
    case 'output':
      if (!str(o.cmd) || !num(o.seq) || !['o', 'e', 'h'].includes(o.stream as string) || !str(o.text))
        return null;
      if (o.log !== undefined && !str(o.log)) return null;
      return {
        type: 'output',
        cmd: o.cmd as string,
        seq: o.seq as number,
        stream: o.stream as OutputStream,
        text: o.text as string,
        ...(str(o.log) ? { log: o.log as string } : {}),
      };
    case 'data':
      if (!str(o.cmd) || !num(o.seq) || !str(o.data)) return null;
      return { type: 'data', cmd: o.cmd as string, seq: o.seq as number, data: o.data as string };
    case 'ack':
      return str(o.cmd) && num(o.seq) ? { type: 'ack', cmd: o.cmd as string, seq: o.seq as number } : null;
    case 'done': {
      const r = o.outcome;
      if (!str(o.cmd) || !isObj(r)) return null;
      return {
        type: 'done',
        cmd: o.cmd as string,
        outcome: {
          rc: num(r.rc) ? (r.rc as number) : null,
          signal: str(r.signal) ? (r.signal as string) : null,
          interrupted: r.interrupted === true,
          timedOut: r.timedOut === true,
          elapsedSeconds: num(r.elapsedSeconds) ? (r.elapsedSeconds as number) : 0,
        },
      };
    }
    default:
      return null;
  }
}

export function parseMasterMessage(text: string): MasterToWorker | null {
  const o = parse(text);
  if (!o) return null;
  switch (o.type) {
    case 'welcome':
      return str(o.master) && (o.silenceMs === undefined || (num(o.silenceMs) && (o.silenceMs as number) > 0))
        ? (o as unknown as MasterToWorker)
        : null;
    case 'start': {
      const r = o.request;
      if (!str(o.cmd) || !isObj(r) || !str(r.workdir)) return null;
      if (!str(r.command) && !(Array.isArray(r.command) && r.command.length > 0 && r.command.every(str)))
        return null;
      // A trace context is optional and only ever a map of strings; anything else is dropped.
      if (o.trace !== undefined && !(isObj(o.trace) && Object.values(o.trace).every(str))) delete o.trace;
      return o as unknown as MasterToWorker;
    }
    case 'transfer': {
      const r = o.request;
      if (!str(o.cmd) || !isObj(r) || !str(r.path)) return null;
      if (!['upload', 'upload-directory', 'download'].includes(r.op as string)) return null;
      return o as unknown as MasterToWorker;
    }
    case 'data':
      return str(o.cmd) && num(o.seq) && str(o.data) ? (o as unknown as MasterToWorker) : null;
    case 'interrupt':
      return str(o.cmd) && str(o.reason) && (o.kill === undefined || typeof o.kill === 'boolean')
        ? (o as unknown as MasterToWorker)
        : null;
    case 'ack':
      return str(o.cmd) && num(o.seq) ? (o as unknown as MasterToWorker) : null;
    default:
      return null;
  }
}
