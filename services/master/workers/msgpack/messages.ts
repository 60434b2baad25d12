// Buildbot's msgpack_experimental_v7 worker protocol, as Buildbot 3.7's master and
// buildbot-worker 3.7 speak it (recorded in test/fixtures/buildbot-msgpack/traffic.jsonl).
//
// One WebSocket at `/`, credentials as HTTP Basic on the upgrade, every frame one binary
// msgpack map. Either side sends requests `{op, seq_number, ...}` numbered from 0 on its own
// counter, and answers the other side's requests with `{op: 'response', seq_number, result}`
// (plus `is_exception: true` when `result` is an error's text). The master drives: print,
// keepalive, get_worker_info, set_worker_settings, start_command, interrupt_command, shutdown.
// The worker reports on commands it was given: update, complete, and the file transfer
// operations (update_upload_file_*, update_upload_directory_*, update_read_file*). It never
// waits for the answer to an update or a complete before sending the next one; it does wait
// for the answers to the file transfer operations, which is what paces a transfer.
import { decode, encode } from '@msgpack/msgpack';

/** Requests the master sends. */
export type MasterOp =
  | { op: 'print'; message: string }
  | { op: 'keepalive' }
  | { op: 'get_worker_info' }
  | { op: 'set_worker_settings'; args: WorkerSettings }
  | { op: 'start_command'; builder_name?: string; command_id: string; command_name: string; args: object }
  | { op: 'interrupt_command'; builder_name?: string; command_id: string; why: string }
  | { op: 'shutdown' };

export interface WorkerSettings {
  newline_re: string;
  max_line_length: number;
  buffer_timeout: number;
  buffer_size: number;
}

/** Requests the worker sends, each about one command the master started. */
export type WorkerOp =
  | { op: 'update'; command_id: string; args: [string, unknown][] }
  | { op: 'complete'; command_id: string; args: string | null }
  | { op: 'update_upload_file_write'; command_id: string; args: Uint8Array }
  | { op: 'update_upload_file_utime'; command_id: string; access_time: number; modified_time: number }
  | { op: 'update_upload_file_close'; command_id: string }
  | { op: 'update_upload_directory_write'; command_id: string; args: Uint8Array }
  | { op: 'update_upload_directory_unpack'; command_id: string }
  | { op: 'update_read_file'; command_id: string; length: number }
  | { op: 'update_read_file_close'; command_id: string };

export type WorkerFrame =
  | (WorkerOp & { seq_number: number })
  | { op: 'response'; seq_number: number; result: unknown; is_exception?: true }
  /** A request of an op this master does not know: answered with an error, as Buildbot does. */
  | { op: 'unknown'; name: string; seq_number: number };

/** What get_worker_info answers (buildbot_worker's remote_getWorkerInfo): files of info/, and these. */
export interface BuildbotWorkerInfo {
  [key: string]: unknown;
  admin?: string;
  host?: string;
  access_uri?: string;
  version?: string;
  basedir?: string;
  system?: string;
  numcpus?: number;
  environ?: Record<string, string>;
  worker_commands?: Record<string, string>;
  delete_leftover_dirs?: boolean | number;
}

/** One line-split piece of output: the text (whole lines), the offsets of its newlines, their times. */
export type LineInfo = [string, number[], number[]];

export function encodeFrame(m: Record<string, unknown>): Uint8Array {
  return encode(m);
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
const str = (v: unknown): v is string => typeof v === 'string';
const int = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const bytes = (v: unknown): v is Uint8Array => v instanceof Uint8Array;

/** A frame from the worker, checked field by field; null for anything malformed. */
export function parseWorkerFrame(data: Uint8Array): WorkerFrame | null {
  let o: unknown;
  try {
    o = decode(data);
  } catch {
    return null;
  }
  if (!isObj(o) || !str(o.op) || !int(o.seq_number)) return null;
  const seq_number = o.seq_number;
  if (o.op === 'response') {
    return o.is_exception === true
      ? { op: 'response', seq_number, result: o.result, is_exception: true }
      : { op: 'response', seq_number, result: o.result };
  }
  const command_id = o.command_id;
  const known = [
    'update',
    'complete',
    'update_upload_file_write',
    'update_upload_file_utime',
    'update_upload_file_close',
    'update_upload_directory_write',
    'update_upload_directory_unpack',
    'update_read_file',
    'update_read_file_close',
  ];
  if (!known.includes(o.op)) return { op: 'unknown', name: o.op, seq_number };
  if (!str(command_id)) return null;
  switch (o.op) {
    case 'update': {
      const args = o.args;
      if (!Array.isArray(args)) return null;
      const pairs: [string, unknown][] = [];
      for (const p of args) {
        if (!Array.isArray(p) || p.length !== 2 || !str(p[0])) return null;
        pairs.push([p[0], p[1]]);
      }
      return { op: 'update', seq_number, command_id, args: pairs };
    }
    case 'complete':
      if (o.args !== null && o.args !== undefined && !str(o.args)) return null;
      return { op: 'complete', seq_number, command_id, args: str(o.args) ? o.args : null };
    case 'update_upload_file_write':
    case 'update_upload_directory_write':
      return bytes(o.args) ? { op: o.op, seq_number, command_id, args: o.args } : null;
    case 'update_upload_file_utime':
      return num(o.access_time) && num(o.modified_time)
        ? { op: o.op, seq_number, command_id, access_time: o.access_time, modified_time: o.modified_time }
        : null;
    case 'update_read_file':
      return int(o.length) ? { op: o.op, seq_number, command_id, length: o.length } : null;
    default:
      return { op: o.op as 'update_upload_file_close', seq_number, command_id };
  }
}

/** A [text, newline offsets, times] triple of an output update, or null. */
export function lineInfo(v: unknown): LineInfo | null {
  if (!Array.isArray(v) || v.length !== 3 || !str(v[0]) || !Array.isArray(v[1]) || !Array.isArray(v[2]))
    return null;
  return v as LineInfo;
}
