// One run's own CPU seconds, from the file load/suite-cpu.ts wrote, on a machine shared with
// other runs (whose processes suite-cpu.ts's table counts too): the processes whose command
// line names the run's folder (its vitest processes, the services it started, the
// PostgreSQL it started detached, with its data folder there) and every descendant of them
// or of the command (`/usr/bin/time -v npm test`). A floor: a process that names no such
// path and whose parent was not sampled (a shell started by a relative path) is missed.
//
//   node --import tsx load/suite-cpu-own.ts OUT.json DIR
import { readFileSync } from 'node:fs';
import type { Proc } from './suite-cpu.js';

const [file, dir] = process.argv.slice(2);
if (!file || !dir) {
  console.error('usage: node load/suite-cpu-own.ts OUT.json DIR');
  process.exit(2);
}
const { wall, procs } = JSON.parse(readFileSync(file, 'utf8')) as { wall: number; procs: Proc[] };
const children = new Map<number, Proc[]>();
for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
const todo = procs.filter((p) => p.args.includes(dir) || p.args.includes('/usr/bin/time -v npm test'));
const own = new Set<Proc>();
while (todo.length > 0) {
  const p = todo.pop()!;
  if (own.has(p)) continue;
  own.add(p);
  todo.push(...(children.get(p.pid) ?? []));
}
const byKind = new Map<string, number>();
for (const p of own) byKind.set(p.kind, (byKind.get(p.kind) ?? 0) + p.cpu);
const total = [...byKind.values()].reduce((a, b) => a + b, 0);
console.log(
  `wall ${wall.toFixed(0)} s; this run's own processes ${total.toFixed(0)} CPU s (${own.size} seen)`,
);
console.log('| kind | CPU s |\n|---|---|');
for (const [kind, cpu] of [...byKind].sort((a, b) => b[1] - a[1])) {
  if (cpu >= 0.05) console.log(`| ${kind} | ${cpu.toFixed(1)} |`);
}
