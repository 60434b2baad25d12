// Each test file's CPU seconds in a run of the suite, the costliest first: what the suite's
// wall time is made of on two busy cores (load/results/test-suite.md). The run writes them
// through test/helpers/file-cpu.ts:
//
//   SUITE_FILE_CPU=/tmp/files.jsonl npm test
//   node --import tsx load/suite-files.ts /tmp/files.jsonl [how many, 40]
//
// A file's CPU is its test process's own (its code, the servers it runs in-process) and that
// of the processes it started and reaped (API, masters, workers, Buildbot, Chromium, tools);
// the shared PostgreSQL and Redis are not in it (load/suite-cpu.ts counts them by kind).
import { readFileSync } from 'node:fs';

interface FileCpu {
  file: string;
  own: number;
  children: number;
  wall: number;
}

const [path, many = '40'] = process.argv.slice(2);
if (!path) throw new Error('usage: suite-files.ts FILE.jsonl [how many]');
const files: FileCpu[] = readFileSync(path, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as FileCpu);
const cpu = (f: FileCpu) => f.own + f.children;
files.sort((a, b) => cpu(b) - cpu(a));
const total = files.reduce((s, f) => s + cpu(f), 0);
const own = files.reduce((s, f) => s + f.own, 0);
console.log(
  `${files.length} files, ${total.toFixed(0)} CPU s (${own.toFixed(0)} in the test processes, ${(total - own).toFixed(0)} in what they started)\n`,
);
console.log('| file | CPU s | own | started | wall s | share |');
console.log('|---|---|---|---|---|---|');
let running = 0;
for (const f of files.slice(0, Number(many))) {
  running += cpu(f);
  console.log(
    `| ${f.file} | ${cpu(f).toFixed(1)} | ${f.own.toFixed(1)} | ${f.children.toFixed(1)} | ${f.wall.toFixed(0)} | ${((100 * running) / total).toFixed(0)}% |`,
  );
}
