// bzip2 (Buildbot's compression code 2: Python's `bz2.compress(data, 9)`), read only:
// chunks a Buildbot master wrote. Decoding uses `seek-bzip` behind a bounded output.
// Flotilla never writes bzip2; the tests' writer is test/helpers/log-vectors/bzip2.ts.

import Bunzip from 'seek-bzip';
import { LogError } from './errors.js';

const BZH = [0x42, 0x5a, 0x68];

/**
 * Decodes one or more concatenated bzip2 streams (bytes after the last stream that do
 * not start another are ignored, as Python's `bz2.decompress` does). Output is capped
 * at `maxBytes`; input that ends early is corrupt.
 */
export function bzip2Decompress(data: Uint8Array, maxBytes: number): Uint8Array {
  const input = {
    pos: 0,
    readByte(): number {
      if (this.pos >= data.length) throw new LogError('LOG_CODEC_CORRUPT', 'bz2: input ends inside a stream');
      return data[this.pos++]!;
    },
    read(buffer: Uint8Array, offset: number, length: number): number {
      const n = Math.min(length, data.length - this.pos);
      if (n <= 0) return -1;
      buffer.set(data.subarray(this.pos, this.pos + n), offset);
      this.pos += n;
      return n;
    },
    seek(pos: number): void {
      this.pos = pos;
    },
  };
  let buf = new Uint8Array(Math.min(maxBytes, Math.max(1024, data.length * 4)));
  const output = {
    pos: 0,
    writeByte(b: number): void {
      if (this.pos >= buf.length) {
        if (this.pos >= maxBytes) {
          throw new LogError('LOG_CODEC_TOO_LARGE', `bz2: decodes to more than ${maxBytes} bytes`);
        }
        const bigger = new Uint8Array(Math.min(maxBytes, buf.length * 2));
        bigger.set(buf);
        buf = bigger;
      }
      buf[this.pos++] = b;
    },
  };
  do {
    Bunzip.decode(input, output, false);
  } while (BZH.every((b, i) => data[input.pos + i] === b));
  return buf.slice(0, output.pos);
}
