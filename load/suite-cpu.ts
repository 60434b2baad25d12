// Where a command's CPU seconds go, by kind of process: every process on the machine is
// sampled from /proc every 200 ms while the command runs, and each one's CPU (user + system,
// its own, not its children's) is the last value seen for it. PostgreSQL and Redis run
// detached from `npm test` (so /usr/bin/time does not count them) and are counted here; so
// is anything else on the machine (the other engineers' runs, stress-ng), under its own kind.
// A process that lives less than a sample apart is missed, and each loses up to 200 ms of
// its end: the total is a floor (compare it with the machine's own, from /proc/stat, printed
// beside it).
//
//   node load/suite-cpu.ts OUT.json -- npm test
//
// Prints a table by kind and writes every process (kind, CPU s, command line) to OUT.json.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

const TICK = 100; // USER_HZ on Linux
const EVERY_MS = 200;

export interface Proc {
  pid: number;
  ppid: number;
  cpu: number;
  args: string;
  kind: string;
  start: number;
  end: number;
}

function kindOf(args: string, comm: string): string {
  if (/stress-ng/.test(args)) return 'stress-ng (beside the suite)';
  if (comm === 'postgres' || /\/postgres\b|postgres:/.test(args)) return 'postgresql';
  if (/redis-(server|sentinel)/.test(args) || /redis-(server|sentinel)/.test(comm)) return 'redis';
  if (/chrom/.test(comm) || /chromium/.test(args)) return 'chromium';
  if (/services\/api\/main\.(js|ts)/.test(args)) return 'node: api';
  if (/services\/master\/main\.(js|ts)/.test(args)) return 'node: master';
  if (/services\/worker\/main\.(js|ts)/.test(args)) return 'node: worker';
  if (/services\//.test(args) && /node/.test(args)) return 'node: other services/ script';
  if (/vitest\/dist\/workers|forks\.js|vitest\/dist\/.*worker/.test(args)) return 'node: vitest test process';
  if (/vitest/.test(args)) return 'node: vitest main';
  if (/\btsc\b|typescript\/bin|typescript\/lib\/tsc/.test(args)) return 'tsc';
  if (/biome/.test(args)) return 'biome';
  if (/esbuild/.test(args)) return 'esbuild';
  if (/\bnpm\b|npm-cli|npx/.test(args)) return 'npm';
  if (/buildbot-worker|buildbot_worker/.test(args)) return 'buildbot-worker (python)';
  if (/buildbot/.test(args)) return 'buildbot master (python)';
  if (/python/.test(args)) return 'python (other)';
  if (/\bhelm\b/.test(args)) return 'helm';
  if (/\bgit\b/.test(args) || comm.startsWith('git')) return 'git';
  if (/\bpsql\b|pg_(ctl|basebackup|dump|restore)|initdb/.test(args)) return 'postgresql tools';
  if (/load\/suite-cpu/.test(args)) return 'this sampler';
  if (/node/.test(comm) || /\bnode\b/.test(args)) return 'node: other';
  return `other: ${comm}`;
}

const seen = new Map<string, Proc>();
const self = process.pid;

function sample(now: number): void {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const f = stat.slice(close + 2).split(' ');
      // fields from 3 on: f[0] is state (3); utime 14, stime 15, starttime 22
      const cpu = (Number(f[11]) + Number(f[12])) / TICK;
      const key = `${pid}:${f[19]}`;
      const p = seen.get(key);
      if (p) {
        p.cpu = cpu;
        p.end = now;
        continue;
      }
      let args = comm;
      try {
        args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim() || comm;
      } catch {}
      seen.set(key, { pid, ppid: Number(f[1]), cpu, args, kind: kindOf(args, comm), start: now, end: now });
    } catch {
      // gone between readdir and read
    }
  }
}

function machineCpu(): number {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: busy = all but idle and iowait
  return (cpu[0]! + cpu[1]! + cpu[2]! + cpu[5]! + cpu[6]! + cpu[7]!) / TICK;
}

const [out, sep, ...cmd] = process.argv.slice(2);
if (!out || sep !== '--' || cmd.length === 0) {
  console.error('usage: node load/suite-cpu.ts OUT.json -- COMMAND [ARGS...]');
  process.exit(2);
}
const t0 = Date.now();
sample(0);
const before = new Map([...seen].map(([k, p]) => [k, p.cpu]));
const m0 = machineCpu();
const child = spawn(cmd[0]!, cmd.slice(1), { stdio: 'inherit' });
const timer = setInterval(() => sample(Date.now() - t0), EVERY_MS);
const code: number = await new Promise((r) => child.on('exit', (c, s) => r(c ?? (s ? 128 : 1))));
clearInterval(timer);
sample(Date.now() - t0);
const wall = (Date.now() - t0) / 1000;
const machine = machineCpu() - m0;

const byKind = new Map<string, { cpu: number; n: number }>();
const procs = [...seen.entries()]
  .filter(([, p]) => p.pid !== self)
  .map(([k, p]) => ({ ...p, cpu: p.cpu - (before.get(k) ?? 0) }))
  .filter((p) => p.cpu > 0);
for (const p of procs) {
  const k = byKind.get(p.kind) ?? { cpu: 0, n: 0 };
  k.cpu += p.cpu;
  if (p.start > 0) k.n++;
  byKind.set(p.kind, k);
}
const rows = [...byKind].sort((a, b) => b[1].cpu - a[1].cpu);
const total = rows.reduce((s, [, k]) => s + k.cpu, 0);
console.error(
  `\nwall ${wall.toFixed(0)} s; machine busy ${machine.toFixed(0)} CPU s; sampled ${total.toFixed(0)} CPU s`,
);
console.error('| kind | CPU s | processes started |\n|---|---|---|');
for (const [kind, k] of rows) if (k.cpu >= 0.05) console.error(`| ${kind} | ${k.cpu.toFixed(1)} | ${k.n} |`);
writeFileSync(out, JSON.stringify({ wall, machine, procs: procs.sort((a, b) => b.cpu - a.cpu) }, null, 1));
process.exit(code);
