// How long the master's log writer takes to split output, before and after lines were bounded
// (docs/security.md, "A line without end"). No database: a line without a newline is never
// stored until it ends, so the time is the splitting alone.
//
//   npx tsx load/bench/long-line.ts [MB]      (default 40)
//
// Three cases, each as 32 KiB pieces (what Flotilla's agent sends at most):
// - MB megabytes without a newline, through today's LogWriter.write;
// - the same through the writer before (its splitting, kept below as it was);
// - 3,000,000 short lines (the first review's figure), through both splittings, so that the
//   bound costs the common case nothing.
import type { Redis } from 'ioredis';
import type { DataContext } from '../../services/core/data/index.js';
import { LineSplitter } from '../../services/master/builds/line-splitter.js';
import { LogWriter } from '../../services/master/builds/log-writer.js';

const PIECE = 32 * 1024;
const mb = Number(process.argv[2] ?? 40);

/** The writer's splitting before this change (services/master/builds/log-writer.ts at 8ed70e0). */
function before(): (text: string) => string[] {
  let partial = '';
  return (text) => {
    const all = (partial + text).replace(/\r\n/g, '\n').replace(/\r(?=.)/gs, '\n');
    const cut = all.lastIndexOf('\n');
    if (cut < 0) {
      partial = all;
      return [];
    }
    partial = all.slice(cut + 1);
    return all.slice(0, cut).split('\n');
  };
}

function time(what: string, fn: () => Promise<void> | void): Promise<void> {
  const t0 = process.hrtime.bigint();
  return Promise.resolve(fn()).then(() => {
    console.log(`${what}: ${(Number(process.hrtime.bigint() - t0) / 1e9).toFixed(2)} s`);
  });
}

const piece = 'x'.repeat(PIECE);
const pieces = Math.ceil((mb * 1e6) / PIECE);
// Never called: no line ends, so nothing is stored.
const writer = new LogWriter({} as DataContext, {} as Redis, 1, 's', 'raw');
await time(`${mb} MB without a newline, LogWriter (now)`, async () => {
  for (let i = 0; i < pieces; i++) await writer.write('o', piece);
});
await time(`${mb} MB without a newline, the writer before`, () => {
  const split = before();
  for (let i = 0; i < pieces; i++) split(piece);
});

const short = Array.from({ length: 3_000_000 }, (_, i) => `line ${i}\n`).join('');
const shortPieces: string[] = [];
for (let at = 0; at < short.length; at += PIECE) shortPieces.push(short.slice(at, at + PIECE));
let counted = 0;
await time('3,000,000 short lines, LineSplitter (now)', () => {
  const s = new LineSplitter();
  for (const p of shortPieces) counted += s.push(p).length;
});
await time('3,000,000 short lines, the splitting before', () => {
  const split = before();
  for (const p of shortPieces) counted -= split(p).length;
});
if (counted !== 0) throw new Error(`the two splittings found different lines (${counted})`);
