// What redaction costs per log line (services/master/builds/redact.ts), and that a text made
// to nearly match a long secret everywhere costs no more than any other text of its length.
// Run: node --expose-gc --import tsx load/bench/redact.ts
// Prints, for 3,000,000 short lines (the size of the review's flood) with no secret, with
// five secrets one of which is a 27-line key, and for 1,000 lines of 10,000 `a`s against a
// secret of 3,000 `a`s and a `b`, the CPU milliseconds and the lines per CPU second; then
// the memory a build's redactor holds for a 3,311-character key (52 lines).
import { Redactor } from '../../services/master/builds/redact.js';

const PEM = [
  '-----BEGIN TEST KEY-----',
  ...Array.from({ length: 25 }, (_, i) => `MIIBOgIBAAJBAKj34GkxFhD90vcN${i}`.padEnd(64, 'x')),
  '-----END TEST KEY-----',
].join('\n');

function time(label: string, r: Redactor, lines: string[]): void {
  // CPU time, not wall time: the machine it runs on is shared.
  const t0 = process.cpuUsage();
  let n = 0;
  for (const l of lines) n += r.clean(l).length;
  const used = process.cpuUsage(t0);
  const ms = (used.user + used.system) / 1000;
  console.log(
    `${label}: ${lines.length} lines, ${ms.toFixed(0)} ms, ${Math.round(lines.length / (ms / 1000))} lines/s (${n} chars out)`,
  );
}

const short = Array.from({ length: 3_000_000 }, (_, i) => `line ${i} of the build's output, ok`);
time('no secret used', new Redactor(), short);
const five = new Redactor();
five.use('hunter2-token', 'token');
five.use(`p'a\\ss`, 'quote');
five.use('correct horse battery staple', 'words');
five.use('k3y-from-a-file', 'key');
five.use(PEM, 'pem');
time('five secrets, one of 27 lines', five, short);

const hostile = new Redactor();
hostile.use(`${'a'.repeat(3000)}b`, 'long');
time('near misses of a 3,001-character secret', hostile, Array(1000).fill('a'.repeat(10_000)));
time('the same length of ordinary text', five, Array(1000).fill('x'.repeat(10_000)));

// Memory: 20 redactors, each with its own key, both cleaners built.
const key = [
  '-----BEGIN RSA PRIVATE KEY-----',
  ...Array.from({ length: 50 }, (_, i) => `${i}`.padEnd(64, 'Abc9+/')),
  '-----END RSA PRIVATE KEY-----',
].join('\n');
const held = () => {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
const before = held();
const kept = Array.from({ length: 20 }, (_, i) => {
  const r = new Redactor();
  r.use(`${key}${i}`, 'key');
  r.clean('x');
  r.cleanLabel('x');
  return r;
});
console.log(
  `a ${key.length}-character key: ${((held() - before) / kept.length / 1e6).toFixed(2)} MB per build (heap and array buffers)`,
);
