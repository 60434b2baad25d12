// Writes what our writers (test/helpers/log-vectors/encode.ts) make of the codec vector inputs (and of a few more), for
// `make-vectors.py verify FILE` to decode with Buildbot's Python libraries:
//   npx tsx test/core/logs/vectors/dump-ours.ts /tmp/ours.json
//   /usr/bin/python3 test/core/logs/vectors/make-vectors.py verify /tmp/ours.json

import { writeFileSync } from 'node:fs';
import { encodeAnyCode } from '../../../helpers/log-vectors/encode.js';
import { codecVectors, inputBytes } from '../vectors.js';

function pseudoRandom(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
    out[i] = x >>> 16;
  }
  return out;
}

const inputs: [string, Uint8Array][] = codecVectors().cases.map((c) => [c.name, inputBytes(c.input)]);
inputs.push(['random-200k', pseudoRandom(200_000, 7)]);
inputs.push(['zeros-3m', new Uint8Array(3_000_000)]);
inputs.push(['periodic', new TextEncoder().encode('ab'.repeat(40_000))]);
for (let n = 0; n <= 20; n++) inputs.push([`short-${n}`, pseudoRandom(n, n + 1).map((b) => 97 + (b % 3))]);

const cases = inputs.map(([name, data]) => ({
  name,
  input: Buffer.from(data).toString('base64'),
  encodings: Object.fromEntries(
    [1, 2, 3, 4, 5].map((code) => [code, Buffer.from(encodeAnyCode(code, data)).toString('base64')]),
  ),
}));
const file = process.argv[2] ?? 'ours.json';
writeFileSync(file, JSON.stringify({ cases }));
console.log(`wrote ${cases.length} inputs x 5 codecs to ${file}`);
