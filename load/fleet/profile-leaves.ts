// A master's CPU profile (MASTER_CPU_PROF, node --cpu-prof) by the function each busy sample
// was in (idle left out), with the `pg` frame beneath it where there is one: where the
// profile-shares.ts reading's `run: - [pg]` goes (load/results/fleet.md, 2026-11-29 01:15:
// the socket writes of each statement).
//
//   node --import tsx load/fleet/profile-leaves.ts DIR/CPU.....cpuprofile [how many]
import { type Frame, samples, shareLines } from './cpu-profile.js';

const [file, top = '25'] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-leaves.ts PROFILE [how many]');
const where = (f: Frame) =>
  `${f.functionName} ${f.url.replace(/.*(node_modules|services)\//, '$1/')}:${f.lineNumber}`;

const self = new Map<string, number>();
for (const { stack, us } of samples(file)) {
  const leaf = stack[0]!;
  if (leaf.functionName === '(idle)') continue;
  const pg = stack.find((f) => /node_modules\/pg\//.test(f.url));
  const key = `${where(leaf)}${pg && pg !== leaf ? `  (under ${where(pg)})` : ''}`;
  self.set(key, (self.get(key) ?? 0) + us);
}
for (const line of shareLines(self, Number(top))) console.log(line);
