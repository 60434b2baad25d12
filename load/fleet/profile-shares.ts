// A master's CPU profile (MASTER_CPU_PROF, node --cpu-prof) up to its first worker command,
// its samples grouped by what was on the stack: `load: <package>` while a module was being
// loaded, `run: <services folder> [<package>]` otherwise, and V8's own (GC, idle, program).
// The profiler samples wall time, so on a loaded machine these are shares, not seconds.
//
//   node --import tsx load/fleet/profile-shares.ts DIR/CPU.....cpuprofile [frame regex] [from regex]
//
// The regex (default: the Flotilla worker connection's `run`) names the frame whose first
// sample ends the reading; `from`, when given, the frame whose first sample begins it (busy
// samples only then: `master/distributor\.js` reads from claiming's first pass to the first command).
import { type Frame, samples, shareLines } from './cpu-profile.js';

const [file, cutAt = 'workers/flotilla/connection\\.js:run$', fromAt] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-shares.ts PROFILE [frame regex] [from regex]');
const name = (f: Frame) => `${f.url.replace(/.*\/(services|node_modules)\//, '$1/')}:${f.functionName}`;
const packageOf = (stack: Frame[]) =>
  stack.map((f) => f.url.match(/node_modules\/((@[^/]+\/)?[^/]+)/)?.[1]).find(Boolean);
const cut = new RegExp(cutAt);
const from = fromAt ? new RegExp(fromAt) : null;
let begun = from === null;
const V8 = ['(idle)', '(garbage collector)', '(program)'];

const shares = new Map<string, number>();
let endedAt: number | null = null;
for (const { stack, at, us } of samples(file)) {
  if (stack.some((f) => cut.test(name(f)))) {
    endedAt = at;
    break;
  }
  begun ||= stack.some((f) => from!.test(f.url));
  if (!begun) continue;
  const leaf = stack[0]!.functionName;
  if (from && leaf === '(idle)') continue;
  let key: string;
  if (V8.includes(leaf)) key = leaf;
  else if (stack.some((f) => /node:internal\/modules\/(esm|cjs)/.test(f.url)))
    key = `load: ${packageOf(stack) ?? (stack.some((f) => f.url.includes('/services/')) ? 'services' : 'node')}`;
  else {
    const own = stack
      .find((f) => f.url.includes('/services/'))
      ?.url.match(/services\/(core|master)\/([^/.]+)/);
    const pkg = packageOf(stack);
    key = `run: ${own ? `${own[1]}/${own[2]}` : '-'}${pkg ? ` [${pkg}]` : ''}`;
  }
  shares.set(key, (shares.get(key) ?? 0) + us);
}
console.log(`${file}: read until ${endedAt === null ? 'the end' : `${(endedAt / 1e6).toFixed(2)} s`}`);
for (const line of shareLines(shares, 30)) console.log(line);
