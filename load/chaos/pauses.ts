// How long each build's command was held back: the longest gap between two of its records
// (load/chaos/job.sh stamps one after every batch, PAUSE seconds apart when nothing holds
// it). A worker stops reading a command's output once its window of unacknowledged output is
// full, so a master that does not acknowledge shows here as a long gap: the stall of a
// Redis outage (load/results/faults.md).
//
//   npx tsx load/chaos/pauses.ts .data/chaos/redis-30s/record.txt
import { readFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) {
  console.error('usage: npx tsx load/chaos/pauses.ts <record.txt>');
  process.exit(2);
}
const times = new Map<string, number[]>();
for (const line of readFileSync(file, 'utf8').split('\n')) {
  const [kind, token, build, , time] = line.split(' ');
  if (!kind || !token || time === undefined) continue;
  const key = `${token} build ${build}`;
  times.set(key, [...(times.get(key) ?? []), Number(time)]);
}
let longest = 0;
for (const [key, ts] of times) {
  ts.sort((a, b) => a - b);
  let gap = 0;
  for (let i = 1; i < ts.length; i++) gap = Math.max(gap, ts[i]! - ts[i - 1]!);
  longest = Math.max(longest, gap);
  console.log(`${key}: ${ts.length} records, longest gap ${gap.toFixed(1)} s`);
}
console.log(`longest gap of any execution: ${longest.toFixed(1)} s`);
