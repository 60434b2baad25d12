// Plain values to jelly and back, for the calls a PbWorkerConnection makes and serves
// (./connection.ts). A command's arguments are built as JavaScript objects by the same code
// that builds msgpack's (../msgpack/shell.ts, ../msgpack/transfers.ts); PB sends them as
// Python dicts, so objects become dictionaries here. What a worker sends back (getWorkerInfo's
// dict, an update's stat tuple) becomes plain objects and arrays again, byte strings read as
// UTF-8, as Buildbot's master decodes them (buildbot/pbutil.py, `decode`).
import { type JellyKey, type JellyValue, type PbReference, Tuple } from './jelly.js';

const isReference = (v: unknown): v is PbReference =>
  typeof v === 'object' && v !== null && (v as PbReference).pbReference === true;

/** A JavaScript value as jelly: objects as dicts (undefined entries left out), arrays as lists. */
export function toJelly(v: unknown): JellyValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint')
    return v;
  if (v instanceof Uint8Array || v instanceof Tuple || isReference(v)) return v;
  if (Array.isArray(v)) return v.map(toJelly);
  if (typeof v === 'object') {
    const m = new Map<JellyKey, JellyValue>();
    for (const [k, x] of Object.entries(v)) if (x !== undefined) m.set(k, toJelly(x));
    return m;
  }
  throw new TypeError(`cannot send a ${typeof v} over PB`);
}

/** A jelly value as plain data: dicts as objects (string keys), tuples as arrays, bytes as text. */
export function fromJelly(v: JellyValue): unknown {
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (Array.isArray(v)) return v.map(fromJelly);
  if (v instanceof Tuple) return v.items.map(fromJelly);
  if (v instanceof Map) {
    const o: Record<string, unknown> = {};
    // Defined, not assigned: a worker's key `__proto__` stays a key instead of replacing the prototype.
    for (const [k, x] of v)
      Object.defineProperty(o, String(k), {
        value: fromJelly(x),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return o;
  }
  return v;
}

/** A string the worker sent, as str or as bytes; undefined for anything else. */
export function textOf(v: JellyValue | undefined): string | undefined {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  return undefined;
}
