// A setup file (vitest.config.ts loads it only when SUITE_FILE_CPU names an output file): each
// test file's CPU seconds, appended to that file as one JSON line per test file, for
// load/suite-files.ts to sort. A setup file runs before each test file in its process, so
// its module body reads the counters before the file's imports, and its afterAll after the
// file's last hook. The test process's own CPU (user + system) and that of the children it has
// reaped (cutime + cstime: the API, masters, workers and tools it started and stopped, with
// their own reaped children) are read from /proc/self/stat. The shared PostgreSQL and Redis
// are not anyone's child here: their CPU is load/suite-cpu.ts's to count. Files run one at a
// time in a process, so the reading between the two ends is the file's.
import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, expect } from 'vitest';

const TICKS = 100; // USER_HZ on Linux

function counters(): { own: number; children: number; at: number } {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return {
    own: (Number(f[11]) + Number(f[12])) / TICKS,
    children: (Number(f[13]) + Number(f[14])) / TICKS,
    at: performance.now(),
  };
}

const out = process.env.SUITE_FILE_CPU;
const begin = counters();
afterAll(() => {
  if (!out) return;
  const end = counters();
  const line = {
    file: relative(process.cwd(), expect.getState().testPath ?? ''),
    pid: process.pid,
    own: +(end.own - begin.own).toFixed(2),
    children: +(end.children - begin.children).toFixed(2),
    wall: +((end.at - begin.at) / 1000).toFixed(1),
    // The process's heap after the file: a shared process keeps every file's modules.
    heapMiB: Math.round(process.memoryUsage().heapUsed / 2 ** 20),
  };
  appendFileSync(out, `${JSON.stringify(line)}\n`);
});
