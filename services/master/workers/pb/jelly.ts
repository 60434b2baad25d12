// Jelly, the object layer over banana, reduced to exactly what Buildbot 3.7's master and
// buildbot-worker exchange (twisted/spread/jelly.py, flavors.py, pb.py; every form below is in
// test/fixtures/pb). An expression is a banana item: ints, floats and byte strings stand for
// themselves; a list's first element names its type:
//   ['None'] · ['boolean', 'true'|'false'] · ['unicode', utf8] · ['list', ...] · ['tuple', ...]
//   ['dictionary', [k, v], ...] · ['reference', n, x] and ['dereference', n] (an object that
//   appears twice in one message) · ['remote', id] (an object of the sender's, callable by
//   `callRemote`) · ['local', id] (one of the receiver's own, sent back) · ['unpersistable',
//   why] · ['twisted.spread.pb.CopyableFailure', state] (an error answer).
// Anything else — classes, modules, instances, functions, sets, datetimes, decimals, `cache`d
// objects, any other copyable class — is what Twisted's SecurityOptions refuse unless told to
// trust it; Buildbot never sends them, so Flotilla refuses them as PB_JELLY_UNKNOWN_TYPE and the
// connection is closed, as Twisted does on `InsecureJelly`.
//
// A JavaScript number that is an integer goes as an int and any other as a float: an integral
// float the master sends (a timeout of 2.0) reaches Python as the int 2, which every Buildbot
// argument accepts. Dictionary keys must be ints, strings, booleans or None (Buildbot's are
// strings); a dereference must name a reference already seen, so no cycle can be built.
import { BananaFloat, type BananaItem } from './banana.js';
import { PbProtocolError } from './errors.js';

/** A Python tuple (kept apart from lists: Buildbot's builder list is a list of tuples). */
export class Tuple {
  readonly items: JellyValue[];
  constructor(...items: JellyValue[]) {
    this.items = items;
  }
}

/** pb's CopyableFailure: how an error travels in an `error` answer. */
export class RemoteFailure {
  constructor(
    /** The exception's class, qualified (`twisted.cred.error.UnauthorizedLogin`). */
    readonly type: string,
    /** str() of the exception. */
    readonly value: string,
    /** Its class and base classes, qualified: what `Failure.check` looks at. */
    readonly parents: string[] = [type],
    readonly traceback = 'Traceback unavailable\n',
  ) {}
}

/** A Python ValueError as the peer sees it: what a PB user's bad argument is answered with. */
export function valueError(message: string): RemoteFailure {
  return new RemoteFailure('builtins.ValueError', message, [
    'builtins.ValueError',
    'builtins.Exception',
    'builtins.BaseException',
    'builtins.object',
  ]);
}

/** Something the sender could not jelly (jelly.py's `Unpersistable`). */
export class Unpersistable {
  constructor(readonly reason: string) {}
}

/** An object the broker puts on the wire itself: one of ours, or a reference to the peer's. */
export interface PbReference {
  readonly pbReference: true;
}

export type JellyKey = string | number | bigint | boolean | null;
export type JellyValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | JellyValue[]
  | Tuple
  | Map<JellyKey, JellyValue>
  | RemoteFailure
  | Unpersistable
  | PbReference;

/** What the broker gives jelly: remote references in, and references out. */
export interface JellyRefs {
  /** ['remote', id]: an object of the peer's. */
  remote(id: number): PbReference;
  /** ['local', id]: one of ours, sent back by the peer. */
  local(id: number): PbReference;
  /** How one of ours, or one of the peer's, goes on the wire. */
  out(ref: PbReference): BananaItem;
}

const COPYABLE_FAILURE = 'twisted.spread.pb.CopyableFailure';
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A dictionary with string keys, as Buildbot's arguments are. */
export function dict(entries: Record<string, JellyValue>): Map<JellyKey, JellyValue> {
  return new Map(Object.entries(entries));
}

function malformed(detail: string): never {
  throw new PbProtocolError('PB_JELLY_MALFORMED', detail);
}

function text(b: BananaItem | undefined, what: string): string {
  if (!(b instanceof Uint8Array)) malformed(`${what} is not a string`);
  try {
    return utf8.decode(b);
  } catch {
    return malformed(`${what} is not UTF-8`);
  }
}

function id(b: BananaItem | undefined, what: string): number {
  if (typeof b !== 'number' || b < 0) malformed(`${what} is not an id`);
  return b;
}

function arity(rest: BananaItem[], n: number, tag: string): void {
  if (rest.length !== n) malformed(`${tag} with ${rest.length} parts`);
}

/** Unjelly one expression (one message's worth: references are per expression). */
export function unjelly(item: BananaItem, refs: JellyRefs): JellyValue {
  const seen = new Map<number, JellyValue>();
  const walk = (x: BananaItem): JellyValue => {
    if (x instanceof BananaFloat) return x.value;
    if (!Array.isArray(x)) return x;
    const [head, ...rest] = x;
    if (!(head instanceof Uint8Array)) return malformed('a list without a type name');
    const tag = Buffer.from(head).toString('latin1');
    switch (tag) {
      case 'None':
        arity(rest, 0, tag);
        return null;
      case 'boolean': {
        arity(rest, 1, tag);
        const v = text(rest[0], tag);
        if (v !== 'true' && v !== 'false') malformed(`boolean ${v}`);
        return v === 'true';
      }
      case 'unicode':
        arity(rest, 1, tag);
        return text(rest[0], tag);
      case 'list':
        return rest.map(walk);
      case 'tuple':
        return new Tuple(...rest.map(walk));
      case 'dictionary': {
        const m = new Map<JellyKey, JellyValue>();
        for (const pair of rest) {
          if (!Array.isArray(pair) || pair.length !== 2) malformed('a dictionary entry that is not a pair');
          const k = walk(pair[0] as BananaItem);
          if (k !== null && typeof k === 'object')
            malformed('a dictionary key that is not a string or a number');
          m.set(k, walk(pair[1] as BananaItem));
        }
        return m;
      }
      case 'reference': {
        arity(rest, 2, tag);
        const n = id(rest[0], tag);
        const v = walk(rest[1] as BananaItem);
        if (seen.has(n)) malformed(`reference ${n} twice`);
        seen.set(n, v);
        return v;
      }
      case 'dereference': {
        arity(rest, 1, tag);
        const n = id(rest[0], tag);
        if (!seen.has(n)) malformed(`dereference ${n} before its reference`);
        return seen.get(n) as JellyValue;
      }
      case 'remote':
        arity(rest, 1, tag);
        return refs.remote(id(rest[0], tag));
      case 'local':
        arity(rest, 1, tag);
        return refs.local(id(rest[0], tag));
      case 'unpersistable':
        arity(rest, 1, tag);
        return new Unpersistable(
          rest[0] instanceof Uint8Array
            ? Buffer.from(rest[0]).toString('utf8')
            : String(walk(rest[0] as BananaItem)),
        );
      case COPYABLE_FAILURE: {
        arity(rest, 1, tag);
        const state = walk(rest[0] as BananaItem);
        if (!(state instanceof Map)) return malformed('a failure without its state');
        const str = (k: string) => {
          const v = state.get(k);
          return typeof v === 'string' ? v : v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : '';
        };
        const parents = state.get('parents');
        return new RemoteFailure(
          str('type'),
          str('value'),
          Array.isArray(parents) ? parents.filter((p): p is string => typeof p === 'string') : [],
          str('traceback'),
        );
      }
      default:
        throw new PbProtocolError('PB_JELLY_UNKNOWN_TYPE', tag.slice(0, 80));
    }
  };
  return walk(item);
}

const tag = (s: string) => Buffer.from(s, 'latin1');

/** Jelly one value for the wire. */
export function jelly(value: JellyValue, refs: JellyRefs): BananaItem {
  const walk = (v: JellyValue): BananaItem => {
    if (v === null) return [tag('None')];
    if (typeof v === 'boolean') return [tag('boolean'), tag(v ? 'true' : 'false')];
    if (typeof v === 'number') return Number.isInteger(v) ? v : new BananaFloat(v);
    if (typeof v === 'bigint') return v;
    if (typeof v === 'string') return [tag('unicode'), Buffer.from(v, 'utf8')];
    if (v instanceof Uint8Array) return v;
    if (Array.isArray(v)) return [tag('list'), ...v.map(walk)];
    if (v instanceof Tuple) return [tag('tuple'), ...v.items.map(walk)];
    if (v instanceof Map) return [tag('dictionary'), ...[...v].map(([k, x]) => [walk(k), walk(x)])];
    if (v instanceof RemoteFailure) return [tag(COPYABLE_FAILURE), walk(failureState(v))];
    if (v instanceof Unpersistable) throw new PbProtocolError('PB_BANANA_UNENCODABLE', 'an unpersistable');
    return refs.out(v);
  };
  return walk(value);
}

/** CopyableFailure's state, in the shape Twisted sends it (pb.py, getStateToCopy). */
function failureState(f: RemoteFailure): Map<JellyKey, JellyValue> {
  return dict({
    count: 0,
    type: Buffer.from(f.type, 'utf8'),
    value: f.value,
    captureVars: false,
    frames: [],
    stack: [],
    tb: null,
    parents: f.parents,
    pickled: 1,
    unsafeTracebacks: false,
    traceback: f.traceback,
  });
}
