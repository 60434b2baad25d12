// The masters' CPU profiles (MASTER_CPU_PROF, node --cpu-prof) over one window of seconds
// from each profile's start, such as phase S's (a master's profile covers its whole life:
// its start, phase 0's connections, S, its stop). Without a window, each profile's busy
// milliseconds a second, to find the window by (S is the burst of about its length in
// seconds that ends before the stop's). With one: the share of busy samples in socket
// writes, then, outside them, the shares by what the sample's innermost package or
// services/ folder was, and a few named frames (load/results/fleet.md, 2026-11-29 03:28).
// The profiler samples wall time: a process preempted inside a write(2) on a loaded machine
// is sampled there, so the writes' share is wall time more than CPU (see the section).
//
//   node --import tsx load/fleet/profile-window.ts DIR/CPU.*.cpuprofile            (the timelines)
//   FROM=13 TO=33 node --import tsx load/fleet/profile-window.ts DIR/CPU.*.cpuprofile
import { type Frame, samples, shareLines } from './cpu-profile.js';

const files = process.argv.slice(2);
if (files.length === 0) throw new Error('usage: [FROM=s TO=s] profile-window.ts PROFILE...');
const WRITES = ['writev', 'writeBuffer', 'writeUtf8String'];
const NAMED: [string, (stack: Frame[]) => boolean][] = [
  ['startedBuild (its own frame)', (s) => s[0]!.functionName === 'startedBuild'],
  [
    'the bus listener (parse, handlers)',
    (s) => s.some((f) => /core\/events\/bus\.js$/.test(f.url) && f.functionName === ''),
  ],
  ['jsonOf', (s) => s.some((f) => f.functionName === 'jsonOf' || f.functionName === 'renderJson')],
  ['traceparent', (s) => s.some((f) => f.functionName === 'traceparent')],
  // A statement's formatting in the driver and node-postgres' copy of it (2026-11-29 05:52).
  [
    'statement formatting (@databases/sql format, split-sql-query)',
    (s) =>
      s.some(
        (f) =>
          (/@databases\/sql\//.test(f.url) && /format/i.test(f.functionName)) ||
          /split-sql-query/.test(f.url),
      ),
  ],
  ['cloneQueryConfig', (s) => s.some((f) => f.functionName === 'cloneQueryConfig')],
  ["core/db's own frames", (s) => /services\/core\/db\//.test(s[0]!.url)],
];
const busy = (stack: Frame[]) => stack[0]!.functionName !== '(idle)';

if (process.env.FROM === undefined) {
  for (const file of files) {
    const perSecond = new Map<number, number>();
    for (const { stack, at, us } of samples(file))
      if (busy(stack)) perSecond.set(Math.floor(at / 1e6), (perSecond.get(Math.floor(at / 1e6)) ?? 0) + us);
    console.log(`${file}\n  ${[...perSecond].map(([s, us]) => `${s}:${Math.round(us / 1e3)}`).join(' ')}`);
  }
} else {
  const [from, to] = [Number(process.env.FROM) * 1e6, Number(process.env.TO) * 1e6];
  const byPackage = new Map<string, number>();
  const named = new Map<string, number>();
  let all = 0;
  let writes = 0;
  for (const file of files)
    for (const { stack, at, us } of samples(file)) {
      if (at < from || at > to || !busy(stack)) continue;
      all += us;
      if (WRITES.includes(stack[0]!.functionName)) {
        writes += us;
        continue;
      }
      const f = stack.find((x) => /node_modules|services\//.test(x.url));
      const key = f
        ? (f.url.match(/node_modules\/((@[^/]+\/)?[^/]+)/)?.[1] ??
          f.url.match(/services\/([^/]+\/[^/.]+)/)?.[1] ??
          f.url)
        : `(V8/node) ${stack[0]!.functionName}`;
      byPackage.set(key, (byPackage.get(key) ?? 0) + us);
      for (const [name, test] of NAMED) if (test(stack)) named.set(name, (named.get(name) ?? 0) + us);
    }
  console.log(`socket writes: ${((100 * writes) / all).toFixed(1)}% of the busy samples; outside them:`);
  for (const line of shareLines(byPackage, 20)) console.log(line);
  const outside = all - writes;
  for (const [name] of NAMED)
    console.log(`${((100 * (named.get(name) ?? 0)) / outside).toFixed(2).padStart(6)}%  ${name}`);
}
