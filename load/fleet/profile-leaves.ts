// A master's CPU profile (MASTER_CPU_PROF, node --cpu-prof) by the function each busy sample
// was in (idle left out), with the `pg` frame beneath it where there is one: where the
// profile-shares.ts reading's `run: - [pg]` goes (load/results/fleet.md, 2026-11-29 01:15:
// the socket writes of each statement).
//
//   node --import tsx load/fleet/profile-leaves.ts DIR/CPU.....cpuprofile [how many]
import { readFileSync } from 'node:fs';

interface Frame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface Node {
  id: number;
  callFrame: Frame;
  children?: number[];
}

const [file, top = '25'] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-leaves.ts PROFILE [how many]');
const p = JSON.parse(readFileSync(file, 'utf8')) as {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
};
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const where = (f: Frame) =>
  `${f.functionName} ${f.url.replace(/.*(node_modules|services)\//, '$1/')}:${f.lineNumber}`;

const self = new Map<string, number>();
let busy = 0;
for (const [i, sample] of p.samples.entries()) {
  const leaf = byId.get(sample)!.callFrame;
  if (leaf.functionName === '(idle)') continue;
  const stack: Frame[] = [];
  for (let x: number | undefined = sample; x !== undefined; x = parent.get(x))
    stack.push(byId.get(x)!.callFrame);
  const pg = stack.find((f) => /node_modules\/pg\//.test(f.url));
  const key = `${where(leaf)}${pg && pg !== leaf ? `  (under ${where(pg)})` : ''}`;
  const dt = p.timeDeltas[i + 1] ?? 0;
  self.set(key, (self.get(key) ?? 0) + dt);
  busy += dt;
}
for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(top)))
  console.log(`${((100 * us) / busy).toFixed(1).padStart(5)}%  ${key}`);
