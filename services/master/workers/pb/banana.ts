// Twisted's banana encoding, the byte layer under Perspective Broker, which every Buildbot
// worker made by plain `buildbot-worker create-worker` speaks (twisted/spread/banana.py).
//
// An element is a base-128 prefix, least significant digit first, each digit a byte below
// 0x80, then a type byte: 0x80 list (prefix = element count), 0x81 int, 0x82 string (prefix =
// byte count, then the bytes), 0x83 negative int, 0x84 float (no prefix; 8 bytes of IEEE double,
// big-endian), 0x85/0x86 long int/negative long int, 0x87 vocabulary symbol (prefix = its
// number; only in the `pb` dialect). The server opens by sending the dialects it knows,
// `['pb', 'none']`; the client answers with the one it picks, as a plain string.
//
// Twisted's limits are followed: 64 bytes of prefix at most, 640 KiB (`SIZE_LIMIT`) for a
// string and for a list's count. Twisted has no nesting limit of its own (Python's recursion
// is what stops it); Flotilla refuses lists nested deeper than 32, which is four times what
// Buildbot sends (a command `update` is nested 7 deep in the recorded session). A whole
// expression is bounded by the same 16 MiB as a msgpack frame (msgpack/server.ts), so that one
// message cannot hold the master's memory however its parts are sized. Each refusal is a
// PbProtocolError; the decoder is then dead and the connection is to be closed, as Twisted does.
//
// The decoder is a state machine fed arbitrary chunks: each byte is looked at once, a string's
// bytes are copied once, so the work is constant per byte whatever the chunk boundaries.
import { PbProtocolError } from './errors.js';

/** Type bytes (banana.py). */
const T = {
  LIST: 0x80,
  INT: 0x81,
  STRING: 0x82,
  NEG: 0x83,
  FLOAT: 0x84,
  LONGINT: 0x85,
  LONGNEG: 0x86,
  VOCAB: 0x87,
} as const;

/** A banana float: kept apart from ints, which JavaScript's numbers cannot tell from it. */
export class BananaFloat {
  constructor(readonly value: number) {}
}

/** What banana carries: ints (bigint past 2^53), floats, byte strings, lists. */
export type BananaItem = number | bigint | BananaFloat | Uint8Array | BananaItem[];

/** The `pb` dialect's vocabulary: symbol number (index) to symbol (banana.py, outgoingVocabulary). */
export const PB_VOCABULARY: readonly string[] = [
  '',
  'None',
  'class',
  'dereference',
  'reference',
  'dictionary',
  'function',
  'instance',
  'list',
  'module',
  'persistent',
  'tuple',
  'unpersistable',
  'copy',
  'cache',
  'cached',
  'remote',
  'local',
  'lcache',
  'version',
  'login',
  'password',
  'challenge',
  'logged_in',
  'not_logged_in',
  'cachemessage',
  'message',
  'answer',
  'error',
  'decref',
  'decache',
  'uncache',
];
const SYMBOLS = new Map(PB_VOCABULARY.map((s, i) => [s, i] as const).filter(([s]) => s !== ''));
const LONGEST_SYMBOL = Math.max(...PB_VOCABULARY.map((s) => s.length));
const VOCAB_BYTES = PB_VOCABULARY.map((s) => Buffer.from(s, 'latin1'));

/** The dialects a server offers, in Twisted's order; Flotilla speaks only `pb`. */
export const SERVER_DIALECTS = ['pb', 'none'] as const;

export interface BananaLimits {
  prefixBytes: number;
  stringBytes: number;
  listItems: number;
  depth: number;
  expressionBytes: number;
}

export const BANANA_LIMITS: BananaLimits = {
  prefixBytes: 64,
  stringBytes: 640 * 1024,
  listItems: 640 * 1024,
  depth: 32,
  expressionBytes: 16 * 1024 * 1024,
};

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;

/** Encode one item; with `vocab` (the `pb` dialect), the vocabulary's strings go as symbols. */
export function encodeBanana(item: BananaItem, vocab: boolean, limits: BananaLimits = BANANA_LIMITS): Buffer {
  const out: Buffer[] = [];
  const largest = 2n ** BigInt(limits.prefixBytes * 7) - 1n;
  const prefix = (n: bigint | number, type: number) => {
    const digits: number[] = [];
    let v = BigInt(n);
    while (v > 0n) {
      digits.push(Number(v & 0x7fn));
      v >>= 7n;
    }
    if (digits.length === 0) digits.push(0);
    digits.push(type);
    out.push(Buffer.from(digits));
  };
  const integer = (n: bigint | number) => {
    const b = BigInt(n);
    if (b > largest || -b > largest)
      throw new PbProtocolError('PB_BANANA_UNENCODABLE', `int ${b} is too large`);
    if (b < BigInt(INT_MIN)) prefix(-b, T.LONGNEG);
    else if (b < 0n) prefix(-b, T.NEG);
    else if (b <= BigInt(INT_MAX)) prefix(b, T.INT);
    else prefix(b, T.LONGINT);
  };
  const walk = (x: BananaItem) => {
    if (Array.isArray(x)) {
      if (x.length > limits.listItems)
        throw new PbProtocolError('PB_BANANA_UNENCODABLE', `list of ${x.length}`);
      prefix(x.length, T.LIST);
      for (const e of x) walk(e);
    } else if (x instanceof Uint8Array) {
      if (vocab && x.length <= LONGEST_SYMBOL) {
        const symbol = SYMBOLS.get(Buffer.from(x).toString('latin1'));
        if (symbol !== undefined) {
          prefix(symbol, T.VOCAB);
          return;
        }
      }
      if (x.length > limits.stringBytes)
        throw new PbProtocolError('PB_BANANA_UNENCODABLE', `string of ${x.length}`);
      prefix(x.length, T.STRING);
      out.push(Buffer.from(x.buffer, x.byteOffset, x.byteLength));
    } else if (x instanceof BananaFloat) {
      const b = Buffer.alloc(9);
      b[0] = T.FLOAT;
      b.writeDoubleBE(x.value, 1);
      out.push(b);
    } else if (typeof x === 'bigint' || Number.isSafeInteger(x)) {
      integer(x);
    } else {
      throw new PbProtocolError('PB_BANANA_UNENCODABLE', `${x} is not an int (floats go as BananaFloat)`);
    }
  };
  walk(item);
  return Buffer.concat(out);
}

interface OpenList {
  want: number;
  items: BananaItem[];
}

/**
 * A streaming decoder: push() chunks as they arrive; each complete top-level expression goes to
 * `onItem`. After a refusal every later push() throws the same error.
 */
export class BananaDecoder {
  /** Set once the `pb` dialect is chosen: vocabulary symbols are refused before. */
  vocab = false;
  private digits: number[] = [];
  private stack: OpenList[] = [];
  /** The string or float being filled, and how much of it has come. */
  private fill: Buffer | null = null;
  private fillKind: 'string' | 'float' = 'string';
  private filled = 0;
  private expressionBytes = 0;
  private failed: PbProtocolError | null = null;

  constructor(
    private readonly onItem: (item: BananaItem) => void,
    private readonly limits: BananaLimits = BANANA_LIMITS,
  ) {}

  /** True between expressions: nothing half-received. */
  get idle(): boolean {
    return this.stack.length === 0 && this.digits.length === 0 && this.fill === null;
  }

  push(chunk: Uint8Array): void {
    if (this.failed) throw this.failed;
    try {
      this.consume(chunk);
    } catch (err) {
      if (err instanceof PbProtocolError) this.failed = err;
      throw err;
    }
  }

  private consume(chunk: Uint8Array): void {
    let i = 0;
    while (i < chunk.length) {
      const fill = this.fill;
      if (fill) {
        const n = Math.min(fill.length - this.filled, chunk.length - i);
        fill.set(chunk.subarray(i, i + n), this.filled);
        this.filled += n;
        this.count(n);
        i += n;
        if (this.filled === fill.length) {
          this.fill = null;
          this.emit(this.fillKind === 'float' ? new BananaFloat(fill.readDoubleBE(0)) : fill);
        }
        continue;
      }
      const byte = chunk[i++] as number;
      this.count(1);
      if (byte < 0x80) {
        if (this.digits.length >= this.limits.prefixBytes)
          throw new PbProtocolError('PB_BANANA_PREFIX_TOO_LONG');
        this.digits.push(byte);
      } else {
        this.element(byte);
      }
    }
  }

  private count(n: number): void {
    this.expressionBytes += n;
    if (this.expressionBytes > this.limits.expressionBytes)
      throw new PbProtocolError('PB_BANANA_EXPRESSION_TOO_LARGE');
  }

  /** The prefix as a count: a number, or Infinity when it cannot be a count within the limits. */
  private size(): number {
    const d = this.digits;
    this.digits = [];
    if (d.length > 7) return d.slice(7).some((x) => x !== 0) ? Number.POSITIVE_INFINITY : size(d.slice(0, 7));
    return size(d);
  }

  private integer(): number | bigint {
    const d = this.digits;
    this.digits = [];
    if (d.length <= 7) return size(d);
    let v = 0n;
    for (let k = d.length - 1; k >= 0; k--) v = (v << 7n) | BigInt(d[k] as number);
    return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  }

  private element(type: number): void {
    switch (type) {
      case T.LIST: {
        const n = this.size();
        if (n > this.limits.listItems) throw new PbProtocolError('PB_BANANA_LIST_TOO_LONG', `${n} items`);
        if (n === 0) {
          this.emit([]);
          return;
        }
        if (this.stack.length >= this.limits.depth) throw new PbProtocolError('PB_BANANA_TOO_DEEP');
        this.stack.push({ want: n, items: [] });
        return;
      }
      case T.STRING: {
        const n = this.size();
        if (n > this.limits.stringBytes) throw new PbProtocolError('PB_BANANA_STRING_TOO_LONG', `${n} bytes`);
        if (n === 0) {
          this.emit(Buffer.alloc(0));
          return;
        }
        this.fill = Buffer.allocUnsafe(n);
        this.fillKind = 'string';
        this.filled = 0;
        return;
      }
      case T.FLOAT:
        // Twisted ignores a float's prefix (its encoder writes none).
        this.digits = [];
        this.fill = Buffer.allocUnsafe(8);
        this.fillKind = 'float';
        this.filled = 0;
        return;
      case T.INT:
      case T.LONGINT:
        this.emit(this.integer());
        return;
      case T.NEG:
      case T.LONGNEG: {
        const v = this.integer();
        this.emit(-v);
        return;
      }
      case T.VOCAB: {
        const n = this.size();
        const symbol = VOCAB_BYTES[n];
        if (!this.vocab || symbol === undefined || n === 0)
          throw new PbProtocolError(
            'PB_BANANA_BAD_VOCAB',
            this.vocab ? `symbol ${n}` : 'before the pb dialect',
          );
        this.emit(Buffer.from(symbol));
        return;
      }
      default:
        throw new PbProtocolError('PB_BANANA_BAD_TYPE_BYTE', `0x${type.toString(16)}`);
    }
  }

  private emit(item: BananaItem): void {
    let value = item;
    for (;;) {
      const top = this.stack[this.stack.length - 1];
      if (!top) break;
      top.items.push(value);
      if (top.items.length < top.want) return;
      this.stack.pop();
      value = top.items;
    }
    this.expressionBytes = 0;
    this.onItem(value);
  }
}

function size(digits: number[]): number {
  let v = 0;
  for (let k = digits.length - 1; k >= 0; k--) v = v * 128 + (digits[k] as number);
  return v;
}
