// The figures behind services/api/reply/compress.ts: what compressing the golden answers
// (test/fixtures/buildbot-3.7/cases.json) saves below and above MIN_BYTES, and what brotli's
// quality costs on the largest of them.
//   node --import tsx load/compression-sizes.ts
import { readFileSync } from 'node:fs';
import * as z from 'node:zlib';

interface Case {
  method: string;
  expect: { body: unknown };
}
const cases = JSON.parse(
  readFileSync(new URL('../test/fixtures/buildbot-3.7/cases.json', import.meta.url), 'utf8'),
) as Case[];
const bodies = cases
  .filter((c) => c.method === 'GET' && typeof c.expect.body === 'object')
  .map((c) => Buffer.from(JSON.stringify(c.expect.body)));
const brotli = (q: number) => (b: Buffer) =>
  z.brotliCompressSync(b, { params: { [z.constants.BROTLI_PARAM_QUALITY]: q } });
const coders: [string, (b: Buffer) => Buffer][] = [
  ['gzip', (b) => z.gzipSync(b)],
  ['br q5', brotli(5)],
  ...('zstdCompressSync' in z
    ? [['zstd', (b: Buffer) => z.zstdCompressSync(b)] as [string, (b: Buffer) => Buffer]]
    : []),
];
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
for (const [label, keep] of [
  ['under 1024 bytes', (b: Buffer) => b.length < 1024],
  ['1024 bytes or more', (b: Buffer) => b.length >= 1024],
] as const) {
  const set = bodies.filter(keep);
  const saved = coders.map(([n, f]) => `${n} ${mean(set.map((b) => b.length - f(b).length)).toFixed(0)}`);
  console.log(
    `${label}: ${set.length} answers, mean ${mean(set.map((b) => b.length)).toFixed(0)} bytes; mean saved: ${saved.join(', ')}`,
  );
}
const largest = bodies.reduce((a, b) => (b.length > a.length ? b : a));
for (const q of [5, 11]) {
  const start = process.hrtime.bigint();
  let size = 0;
  for (let i = 0; i < 20; i++) size = brotli(q)(largest).length;
  const ms = Number(process.hrtime.bigint() - start) / 20e6;
  console.log(`largest answer ${largest.length} bytes: brotli q${q} ${size} bytes, ${ms.toFixed(1)} ms`);
}
