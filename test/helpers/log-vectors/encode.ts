// Chunk bytes in any of Buildbot's compression codes, for tests that store or read rows
// as a Buildbot master could have written them: the service's encoder for the codes
// Flotilla writes, the tests' own writers for bz2 and lz4 (which it only reads).

import { encode } from '../../../services/core/logs/codecs.js';
import { bzip2Compress } from './bzip2.js';
import { lz4Compress } from './lz4.js';

export function encodeAnyCode(code: number, data: Uint8Array): Uint8Array {
  if (code === 2) return bzip2Compress(data);
  if (code === 3) return lz4Compress(data);
  return encode(code, data);
}
