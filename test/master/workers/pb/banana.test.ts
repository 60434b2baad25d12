// Banana against Twisted's facts: random values round-trip through any chunking, the streams a
// real Buildbot master and worker sent decode completely and re-encode to the very same bytes,
// and every malformed or oversize input is refused with its stable code.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BANANA_LIMITS,
  BananaDecoder,
  BananaFloat,
  type BananaItem,
  encodeBanana,
  PB_VOCABULARY,
} from '../../../../services/master/workers/pb/banana.js';
import { PbProtocolError } from '../../../../services/master/workers/pb/errors.js';
import { recording, type Side, stream } from './recorded.js';

function decodeAll(chunks: Uint8Array[], vocab: boolean, limits = BANANA_LIMITS): BananaItem[] {
  const items: BananaItem[] = [];
  const d = new BananaDecoder((i) => items.push(i), limits);
  d.vocab = vocab;
  for (const c of chunks) d.push(c);
  expect(d.idle).toBe(true);
  return items;
}

function refusal(bytes: number[] | Buffer, vocab = true, limits = BANANA_LIMITS): string {
  const d = new BananaDecoder(() => {}, limits);
  d.vocab = vocab;
  try {
    d.push(Buffer.from(bytes));
  } catch (err) {
    expect(err).toBeInstanceOf(PbProtocolError);
    // A refused decoder stays refused.
    expect(() => d.push(Buffer.from([0x01, 0x81]))).toThrow(err as Error);
    return (err as PbProtocolError).code;
  }
  return 'accepted';
}

/** Split `b` at the given cut points. */
function cut(b: Buffer, at: number[]): Buffer[] {
  const points = [...new Set(at.map((p) => p % (b.length + 1)))].sort((x, y) => x - y);
  const out: Buffer[] = [];
  let from = 0;
  for (const p of points) {
    out.push(b.subarray(from, p));
    from = p;
  }
  out.push(b.subarray(from));
  return out;
}

const LARGEST = 2n ** 448n - 1n;
const item: fc.Arbitrary<BananaItem> = fc.letrec<{ item: BananaItem }>((tie) => ({
  item: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
    fc.bigInt({ min: -LARGEST, max: LARGEST }),
    fc.double().map((v) => new BananaFloat(v)),
    fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)),
    fc.constantFrom(...PB_VOCABULARY.slice(1)).map((s) => Buffer.from(s)),
    fc.array(tie('item'), { maxLength: 5 }),
  ),
})).item;

/** What decoding gives back: bigints in the safe range come back as numbers. */
function normal(x: BananaItem): BananaItem {
  if (Array.isArray(x)) return x.map(normal);
  if (typeof x === 'bigint' && x >= BigInt(Number.MIN_SAFE_INTEGER) && x <= BigInt(Number.MAX_SAFE_INTEGER))
    return Number(x);
  return x;
}

describe('banana', () => {
  it('round-trips any value through any chunking, with and without the pb vocabulary', () => {
    fc.assert(
      fc.property(item, fc.boolean(), fc.array(fc.nat()), (x, vocab, at) => {
        const bytes = encodeBanana(x, vocab);
        expect(decodeAll(cut(bytes, at), vocab)).toEqual([normal(x)]);
      }),
      { numRuns: 300 },
    );
  });

  it('encodes ints in Twisted’s four forms, at Twisted’s boundaries', () => {
    expect([...encodeBanana(0, false)]).toEqual([0x00, 0x81]);
    expect([...encodeBanana(2 ** 31 - 1, false)].at(-1)).toBe(0x81);
    expect([...encodeBanana(2 ** 31, false)].at(-1)).toBe(0x85);
    expect([...encodeBanana(-(2 ** 31), false)].at(-1)).toBe(0x83);
    expect([...encodeBanana(-(2 ** 31) - 1, false)].at(-1)).toBe(0x86);
    expect([...encodeBanana(Buffer.from('message'), true)]).toEqual([26, 0x87]);
    expect([...encodeBanana(Buffer.from('message'), false)]).toEqual([7, 0x82, ...Buffer.from('message')]);
  });

  for (const name of ['session', 'login-wrong-password'] as const) {
    for (const side of ['master', 'worker'] as Side[]) {
      it(`decodes every byte the ${side} sent in ${name} and re-encodes it byte for byte`, () => {
        const r = recording(name);
        const chunks = r.chunks.filter((c) => c.from === side).map((c) => c.data);
        const items: BananaItem[] = [];
        const d = new BananaDecoder((i) => {
          items.push(i);
          // The first expression each way is the dialect; vocabulary symbols follow it.
          d.vocab = true;
        });
        for (const c of chunks) d.push(c);
        expect(d.idle).toBe(true);
        expect(items.length).toBeGreaterThan(3);
        const again = Buffer.concat(items.map((i, n) => encodeBanana(i, n > 0)));
        expect(again.equals(stream(r, side))).toBe(true);
        // Byte by byte gives the same items.
        const one: BananaItem[] = [];
        const d1 = new BananaDecoder((i) => {
          one.push(i);
          d1.vocab = true;
        });
        for (const b of stream(r, side)) d1.push(Buffer.from([b]));
        expect(one).toEqual(items);
      });
    }
  }

  it('refuses what Twisted refuses, and what is too big or too deep', () => {
    expect(refusal(Array(65).fill(1))).toBe('PB_BANANA_PREFIX_TOO_LONG');
    expect(refusal([...Array(64).fill(0), 0x81])).toBe('accepted');
    const over = encodeBanana(640 * 1024 + 1, false).subarray(0, -1);
    expect(refusal([...over, 0x82])).toBe('PB_BANANA_STRING_TOO_LONG');
    expect(refusal([...over, 0x80])).toBe('PB_BANANA_LIST_TOO_LONG');
    expect(refusal([...Array(70).fill(0), 0x82])).toBe('PB_BANANA_PREFIX_TOO_LONG');
    expect(refusal([...Array(9).fill(0x7f), 0x82])).toBe('PB_BANANA_STRING_TOO_LONG');
    expect(refusal(Array(33).fill([1, 0x80]).flat())).toBe('PB_BANANA_TOO_DEEP');
    expect(refusal(Array(32).fill([1, 0x80]).flat())).toBe('accepted');
    expect(refusal([1, 0x88])).toBe('PB_BANANA_BAD_TYPE_BYTE');
    expect(refusal([1, 0xff])).toBe('PB_BANANA_BAD_TYPE_BYTE');
    expect(refusal([26, 0x87], false)).toBe('PB_BANANA_BAD_VOCAB');
    expect(refusal([32, 0x87])).toBe('PB_BANANA_BAD_VOCAB');
    expect(refusal([0, 0x87])).toBe('PB_BANANA_BAD_VOCAB');
    const small = { ...BANANA_LIMITS, expressionBytes: 100 };
    expect(refusal(encodeBanana(Buffer.alloc(98), false), true, small)).toBe('accepted');
    expect(refusal(encodeBanana([Buffer.alloc(60), Buffer.alloc(60)], false), true, small)).toBe(
      'PB_BANANA_EXPRESSION_TOO_LARGE',
    );
    // The bound is per expression: many small ones in one chunk are fine.
    const many = Buffer.concat(Array.from({ length: 20 }, () => encodeBanana(Buffer.alloc(50), false)));
    expect(decodeAll([many], true, small)).toHaveLength(20);
  });

  it('refuses to send what Twisted refuses to send', () => {
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return (err as PbProtocolError).code;
      }
      return 'sent';
    };
    expect(code(() => encodeBanana(1.5, true))).toBe('PB_BANANA_UNENCODABLE');
    expect(code(() => encodeBanana(2n ** 448n, true))).toBe('PB_BANANA_UNENCODABLE');
    expect(code(() => encodeBanana(2n ** 448n - 1n, true))).toBe('sent');
    expect(code(() => encodeBanana(Buffer.alloc(640 * 1024 + 1), true))).toBe('PB_BANANA_UNENCODABLE');
    expect(code(() => encodeBanana(Array(640 * 1024 + 1).fill(0), true))).toBe('PB_BANANA_UNENCODABLE');
  });
});
