// Buildbot's compression codes: decoding what the Python libraries wrote (vectors),
// round trips through our writers (the service's, and the tests' own for bz2 and lz4, which
// Flotilla only reads), and hostile input failing with typed errors.
import zlib from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  COMPRESSION_CODES,
  compressionCode,
  decode,
  encode,
  isCompressionCode,
  MAX_DECODED_BYTES,
} from '../../../services/core/logs/codecs.js';
import { encodeAnyCode } from '../../helpers/log-vectors/encode.js';
import { errorCode } from './errors.js';
import { codecVectors, inputBytes } from './vectors.js';

const vectors = codecVectors();
const CODES = [0, 1, 2, 3, 4, 5] as const;

const b64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));
const text = (s: string) => new TextEncoder().encode(s);

describe('decode: what the Python libraries wrote', () => {
  for (const c of vectors.cases) {
    const input = inputBytes(c.input);
    for (const e of c.encodings) {
      it(`${c.name}: code ${e.code} (${e.variant})`, () => {
        expect(Buffer.from(decode(e.code, b64(e.b64))).equals(Buffer.from(input))).toBe(true);
      });
    }
  }

  it('covers every compressed code', () => {
    const codes = new Set(vectors.cases.flatMap((c) => c.encodings.map((e) => e.code)));
    expect([...codes].sort()).toEqual([1, 2, 3, 4, 5]);
  });

  it('code 0 is the bytes as stored', () => {
    const data = text('ohello\n');
    expect(decode(0, data)).toEqual(data);
  });
});

describe('encode then decode', () => {
  for (const c of vectors.cases) {
    const input = inputBytes(c.input);
    it(`${c.name}: every code`, () => {
      for (const code of CODES) {
        const back = decode(code, encodeAnyCode(code, input));
        expect(Buffer.from(back).equals(Buffer.from(input)), `code ${code}`).toBe(true);
      }
    });
  }

  it('any bytes, every code (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), fc.constantFrom(...CODES), (data, code) => {
        expect(Buffer.from(decode(code, encodeAnyCode(code, data))).equals(Buffer.from(data))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('repetitive text with long runs, every code (property)', () => {
    const repetitive = fc
      .array(
        fc.tuple(
          fc.constantFrom('a', 'b', 'o line\n', '✓', '\u0000', 'xyzxyz'),
          fc.integer({ min: 1, max: 400 }),
        ),
        {
          maxLength: 30,
        },
      )
      .map((runs) => text(runs.map(([s, n]) => s.repeat(n)).join('')));
    fc.assert(
      fc.property(repetitive, fc.constantFrom(...CODES), (data, code) => {
        expect(Buffer.from(decode(code, encodeAnyCode(code, data))).equals(Buffer.from(data))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('lz4 and bz2 beyond one window or block (70 kB random, 1.2 MB text)', () => {
    const random = new Uint8Array(70_000).map((_, i) => (Math.imul(i + 1, 2654435761) >>> 13) & 0xff);
    const big = text(Array.from({ length: 40_000 }, (_, i) => `line ${i % 977}: linking objects\n`).join(''));
    for (const data of [random, big]) {
      for (const code of [2, 3]) {
        expect(Buffer.from(decode(code, encodeAnyCode(code, data))).equals(Buffer.from(data))).toBe(true);
      }
    }
  });

  it('writes the framing Buildbot expects: 78 da, BZh9, size-prefixed lz4, zstd magic', () => {
    const data = text('otest_001 ... ok\n'.repeat(20));
    expect(Buffer.from(encodeAnyCode(1, data).subarray(0, 2)).toString('hex')).toBe('78da');
    expect(Buffer.from(encodeAnyCode(2, data).subarray(0, 4)).toString('latin1')).toBe('BZh9');
    expect(Buffer.from(encodeAnyCode(3, data).subarray(0, 4)).readUInt32LE(0)).toBe(data.length);
    expect(Buffer.from(encodeAnyCode(4, data).subarray(0, 4)).toString('hex')).toBe('28b52ffd');
  });

  it('zstd frames record their content size, which python-zstandard (Buildbot) needs to decode them', () => {
    for (const n of [0, 1, 200, 70_000, 3_000_000]) {
      const data = new Uint8Array(n).map((_, i) => 97 + (i % 7));
      expect(zstdFrameContentSize(encodeAnyCode(4, data)), `${n} bytes`).toBe(n);
    }
  });

  it('matches python-lz4 and bz2 byte for byte on small inputs', () => {
    for (const c of vectors.cases.filter((v) => ['empty', 'one-byte', 'runs'].includes(v.name))) {
      const input = inputBytes(c.input);
      const lz4 = c.encodings.find((e) => e.variant === 'lz4.block.compress(data)')!;
      expect(Buffer.from(encodeAnyCode(3, input)).toString('base64'), c.name).toBe(lz4.b64);
    }
    const empty = vectors.cases.find((v) => v.name === 'empty')!;
    expect(Buffer.from(encodeAnyCode(2, new Uint8Array(0))).toString('base64')).toBe(
      empty.encodings.find((e) => e.code === 2)!.b64,
    );
  });
});

describe('codes and names', () => {
  it("maps Buildbot's method names to codes", () => {
    expect(COMPRESSION_CODES).toEqual({ raw: 0, gz: 1, bz2: 2, lz4: 3, zstd: 4, br: 5 });
    expect(compressionCode('gz')).toBe(1);
    expect(compressionCode('lz4')).toBe(3);
    expect(errorCode(() => compressionCode('gzip'))).toBe('LOG_CODEC_UNKNOWN');
    expect(errorCode(() => compressionCode('toString'))).toBe('LOG_CODEC_UNKNOWN');
  });

  it('writes no bz2 or lz4: Flotilla only reads them', () => {
    for (const code of [2, 3]) expect(errorCode(() => encode(code, text('x')))).toBe('LOG_CODEC_READ_ONLY');
  });

  it('refuses codes outside 0-5', () => {
    for (const code of [-1, 6, 1.5, Number.NaN, 255]) {
      expect(isCompressionCode(code)).toBe(false);
      expect(errorCode(() => decode(code, text('x')))).toBe('LOG_CODEC_UNKNOWN');
      expect(errorCode(() => encode(code, text('x')))).toBe('LOG_CODEC_UNKNOWN');
    }
  });
});

describe('hostile input', () => {
  const sample = text('otest_001 ... ok (build)\n'.repeat(50));

  it('garbage fails with a typed error for every compressed code', () => {
    const garbage = [
      new Uint8Array(0),
      text('x'),
      text('not compressed at all, just text'),
      new Uint8Array(64),
    ];
    for (const code of [1, 2, 3, 4, 5]) {
      for (const g of garbage) {
        // Text read as an lz4 header declares a size of 544 MB: too large, before it is corrupt.
        expect(
          errorCode(() => decode(code, g)),
          `code ${code} on ${g.length} bytes`,
        ).toMatch(/^LOG_CODEC_(CORRUPT|TOO_LARGE)$/);
      }
    }
  });

  it('truncated streams fail as LOG_CODEC_CORRUPT', () => {
    for (const code of [1, 2, 3, 4, 5]) {
      const packed = encodeAnyCode(code, sample);
      for (const cut of [1, 2, Math.floor(packed.length / 2), packed.length - 1]) {
        expect(
          errorCode(() => decode(code, packed.subarray(0, cut))),
          `code ${code} cut at ${cut}`,
        ).toBe('LOG_CODEC_CORRUPT');
      }
    }
  });

  it('flipped bytes never crash: typed error or (rarely) other bytes', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(1, 2, 3, 4, 5),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (code, at, mask) => {
          const packed = new Uint8Array(encodeAnyCode(code, sample));
          packed[at % packed.length]! ^= mask;
          const outcome = errorCode(() => decode(code, packed));
          expect(['no error', 'LOG_CODEC_CORRUPT', 'LOG_CODEC_TOO_LARGE']).toContain(outcome);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('random bytes never crash any decoder', () => {
    fc.assert(
      fc.property(fc.constantFrom(1, 2, 3, 4, 5), fc.uint8Array({ maxLength: 200 }), (code, data) => {
        expect(['no error', 'LOG_CODEC_CORRUPT', 'LOG_CODEC_TOO_LARGE']).toContain(
          errorCode(() => decode(code, data)),
        );
      }),
      { numRuns: 400 },
    );
  });

  it('decompression bombs stop at the 64 MiB cap', () => {
    expect(MAX_DECODED_BYTES).toBe(64 * 1024 * 1024);
    for (const bomb of vectors.bombs) {
      expect(bomb.decoded_size).toBeGreaterThan(MAX_DECODED_BYTES);
      expect(
        errorCode(() => decode(bomb.code, b64(bomb.b64))),
        `code ${bomb.code}`,
      ).toBe('LOG_CODEC_TOO_LARGE');
    }
  });

  it('maxBytes caps every codec', () => {
    const data = new Uint8Array(100_000).fill(0x61);
    for (const code of CODES) {
      const packed = encodeAnyCode(code, data);
      expect(
        errorCode(() => decode(code, packed, { maxBytes: 99_999 })),
        `code ${code}`,
      ).toBe('LOG_CODEC_TOO_LARGE');
      expect(decode(code, packed, { maxBytes: 100_000 }).length).toBe(100_000);
    }
    const gz = zlib.deflateSync(Buffer.alloc(5_000_000));
    expect(errorCode(() => decode(1, gz, { maxBytes: 1000 }))).toBe('LOG_CODEC_TOO_LARGE');
  });

  it('lz4: an absurd declared size is refused before allocating', () => {
    expect(errorCode(() => decode(3, new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x00])))).toBe(
      'LOG_CODEC_TOO_LARGE',
    );
  });

  it('lz4: header-only, bad offsets, overruns and size mismatches are corrupt', () => {
    const cases: [string, number[]][] = [
      ['header only', [0, 0, 0, 0]],
      ['short header', [1, 0]],
      ['fewer bytes than declared', [2, 0, 0, 0, 0x10, 0x61]],
      ['more literals than declared', [1, 0, 0, 0, 0x20, 0x61, 0x62]],
      ['offset 0', [8, 0, 0, 0, 0x14, 0x61, 0x00, 0x00, 0x00]],
      ['offset before the output', [8, 0, 0, 0, 0x14, 0x61, 0x02, 0x00, 0x00]],
      ['input ends inside an offset', [8, 0, 0, 0, 0x14, 0x61, 0x01]],
      ['input ends inside a length', [30, 0, 0, 0, 0xf0, 0xff]],
      ['match past the declared size', [5, 0, 0, 0, 0x14, 0x61, 0x01, 0x00, 0x00]],
    ];
    for (const [why, bytes] of cases) {
      expect(
        errorCode(() => decode(3, new Uint8Array(bytes))),
        why,
      ).toBe('LOG_CODEC_CORRUPT');
    }
    // The same shapes, well formed: an overlapping match repeats the last bytes.
    expect(
      new TextDecoder().decode(decode(3, new Uint8Array([9, 0, 0, 0, 0x14, 0x61, 0x01, 0x00, 0x00]))),
    ).toBe('aaaaaaaaa');
  });
});

/**
 * The Frame_Content_Size of a zstd frame (RFC 8878, 3.1.1.1), or null when the frame
 * header does not carry one.
 */
function zstdFrameContentSize(frame: Uint8Array): number | null {
  const b = Buffer.from(frame);
  expect(b.readUInt32LE(0)).toBe(0xfd2fb528);
  const descriptor = b[4]!;
  const fcsFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  const dictIdBytes = [0, 1, 2, 4][descriptor & 3]!;
  const fcsBytes = [singleSegment ? 1 : 0, 2, 4, 8][fcsFlag]!;
  if (fcsBytes === 0) return null;
  const at = 5 + (singleSegment ? 0 : 1) + dictIdBytes;
  if (fcsBytes === 1) return b[at]!;
  if (fcsBytes === 2) return b.readUInt16LE(at) + 256;
  if (fcsBytes === 4) return b.readUInt32LE(at);
  return Number(b.readBigUInt64LE(at));
}
