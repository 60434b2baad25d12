// What the build commands themselves recorded (load/chaos/job.sh): one execution per
// (token, build number), from its start to its last record, and which of them ran at the
// same moment as another execution of the same request. This is the ground truth of
// "executed twice at once": it is written by the commands, not by Flotilla.
import { readFileSync } from 'node:fs';

export interface Execution {
  token: string;
  build: number;
  pid: number;
  start: number;
  /** The time of its last record: when it ended, or (killed) a lower bound of it. */
  last: number;
  end: 'end' | 'term' | null;
  ticks: number;
}

export interface Overlap {
  token: string;
  builds: [number, number];
  seconds: number;
}

export function readExecutions(file: string): Execution[] {
  const byKey = new Map<string, Execution>();
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  for (const line of text.split('\n')) {
    const [kind, token, build, pid, time] = line.split(' ');
    if (!kind || !token || time === undefined) continue;
    const key = `${token} ${build}`;
    const t = Number(time);
    let e = byKey.get(key);
    if (!e) {
      e = { token, build: Number(build), pid: Number(pid), start: t, last: t, end: null, ticks: 0 };
      byKey.set(key, e);
    }
    e.last = Math.max(e.last, t);
    if (kind === 'tick') e.ticks++;
    if (kind === 'end' || kind === 'term') e.end = kind;
  }
  return [...byKey.values()];
}

/** Some request's second execution has printed two batches (it is under way, not just started). */
export function rerunUnderWay(file: string): boolean {
  const ex = readExecutions(file);
  return ex.some((e) => e.ticks >= 2 && ex.some((o) => o.token === e.token && o.start < e.start));
}

/** Pairs of executions of one request whose [start, last] intervals intersect. */
export function overlaps(execs: readonly Execution[]): Overlap[] {
  const byToken = new Map<string, Execution[]>();
  for (const e of execs) byToken.set(e.token, [...(byToken.get(e.token) ?? []), e]);
  const out: Overlap[] = [];
  for (const [token, list] of byToken) {
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const a = list[i]!;
        const b = list[j]!;
        const seconds = Math.min(a.last, b.last) - Math.max(a.start, b.start);
        if (seconds > 0) out.push({ token, builds: [a.build, b.build], seconds });
      }
    }
  }
  return out;
}

/**
 * Requests whose command ran to its end and then ran again: every execution but a request's
 * last must have been stopped (killed or sent SIGTERM) by the fault that made its build run
 * again. One that printed its last line was never stopped: had it been slower, it would have
 * run beside its rerun. So a regression that lets a lost build's command live on shows here
 * even when the build is too short for the overlap to show (its command ended before the
 * rerun began).
 */
export function endedThenRerun(execs: readonly Execution[]): string[] {
  const byToken = new Map<string, Execution[]>();
  for (const e of execs) byToken.set(e.token, [...(byToken.get(e.token) ?? []), e]);
  const out: string[] = [];
  for (const [token, list] of byToken) {
    const ordered = [...list].sort((a, b) => a.start - b.start);
    if (ordered.slice(0, -1).some((e) => e.end === 'end')) out.push(token);
  }
  return out;
}

function procStat(pid: number): { state: string; pgid: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0]!, pgid: Number(rest[2]) };
  } catch {
    return null;
  }
}

/** The process of an execution, while it is alive and still this job (its command line names the file). */
function liveProcess(e: Execution, file: string): { pgid: number } | null {
  const st = procStat(e.pid);
  if (!st || st.state === 'Z') return null;
  try {
    return readFileSync(`/proc/${e.pid}/cmdline`, 'utf8').includes(file) ? st : null;
  } catch {
    return null;
  }
}

/** Executions whose command runs right now. */
export function runningExecutions(file: string): Execution[] {
  return readExecutions(file).filter((e) => liveProcess(e, file) !== null);
}

/** The process groups of the commands that run right now. */
export function leftoverCommands(file: string): number[] {
  const groups = new Set<number>();
  for (const e of readExecutions(file)) {
    const p = liveProcess(e, file);
    if (p) groups.add(p.pgid);
  }
  return [...groups];
}
