// What a buildbot-worker's `update` and `complete` carry over PB (buildbot_worker/pb.py,
// ProtocolCommandPb; buildbot/process/remotecommand.py, remote_update), read into the same
// pieces the msgpack connection reads (../msgpack/connection.ts): output of a stream or of
// a named log, and the values the master uses (rc, elapsed, stat, files).
//
// The wire: `update(updates)` with updates a list of `[{key: value}, 0]` (the 0 is the
// update number old masters counted; one key per dict in 3.7, any number accepted here).
// stdout, stderr and header carry text; `log` carries `(logname, text)`; other keys carry
// their value. Text is whole lines: the worker cut it (its LineBoundaryFinder, the same
// buffer as on msgpack). `complete(failure)` carries None, or the CopyableFailure of an
// exception inside the worker.
import type { OutputStream } from '../../../core/protocol/messages.js';
import { READ_VALUES } from '../msgpack/worker-link.js';
import { type JellyValue, RemoteFailure, Tuple } from './jelly.js';
import { fromJelly, textOf } from './values.js';

export type UpdatePiece =
  | { output: OutputStream; text: string; log?: string }
  | { key: string; value: unknown };

const STREAMS: Record<string, OutputStream> = { stdout: 'o', stderr: 'e', header: 'h' };

const items = (v: JellyValue | undefined): JellyValue[] | null =>
  Array.isArray(v) ? v : v instanceof Tuple ? v.items : null;

/** The pieces of one `update` call's argument, in order; throws on a malformed one. */
export function readUpdates(updates: JellyValue | undefined): UpdatePiece[] {
  const list = items(updates);
  if (!list) throw new Error('update: not a list of updates');
  const pieces: UpdatePiece[] = [];
  for (const u of list) {
    const pair = items(u);
    const d = pair?.[0];
    if (pair?.length !== 2 || !(d instanceof Map)) throw new Error('update: not a [dict, number] pair');
    for (const [k, value] of d) {
      if (typeof k !== 'string') throw new Error('update: a key that is not a string');
      const stream = STREAMS[k];
      if (stream !== undefined) {
        const text = textOf(value);
        if (text === undefined) throw new Error(`update: ${k} is not text`);
        pieces.push({ output: stream, text });
      } else if (k === 'log') {
        const lv = items(value);
        const log = textOf(lv?.[0]);
        const text = textOf(lv?.[1]);
        if (lv?.length !== 2 || log === undefined || text === undefined)
          throw new Error('update: log is not (name, text)');
        pieces.push({ output: 'o', text, log });
      } else if (READ_VALUES.has(k)) pieces.push({ key: k, value: fromJelly(value) });
    }
  }
  return pieces;
}

/** complete's argument: null when the command ran to its end, else the worker's failure as text. */
export function failureText(failure: JellyValue | undefined): string | null {
  if (failure === null || failure === undefined) return null;
  if (failure instanceof RemoteFailure) {
    const short = failure.type.split('.').pop() || 'Exception';
    return failure.value ? `${short}: ${failure.value}` : short;
  }
  return textOf(failure) ?? String(fromJelly(failure));
}

/** How many bytes of output the pieces hold (what waits for the sink while they are stored). */
export function outputBytes(pieces: UpdatePiece[]): number {
  let n = 0;
  for (const p of pieces) if ('output' in p) n += p.text.length;
  return n;
}
