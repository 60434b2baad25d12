// A V8 CPU profile (node --cpu-prof, a master's with MASTER_CPU_PROF) read as its samples,
// each with its stack (leaf first) and the wall time it stands for: what profile-shares.ts
// and profile-leaves.ts group in their two ways.
import { readFileSync } from 'node:fs';

export interface Frame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface Node {
  id: number;
  callFrame: Frame;
  children?: number[];
}

export interface Sample {
  /** Leaf first. */
  stack: Frame[];
  /** Microseconds from the profile's start to this sample. */
  at: number;
  /** Microseconds this sample stands for (until the next one). */
  us: number;
}

export function* samples(file: string): Generator<Sample> {
  const p = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: Node[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  let at = 0;
  for (const [i, sample] of p.samples.entries()) {
    at += p.timeDeltas[i] ?? 0;
    const stack: Frame[] = [];
    for (let x: number | undefined = sample; x !== undefined; x = parent.get(x))
      stack.push(byId.get(x)!.callFrame);
    yield { stack, at, us: p.timeDeltas[i + 1] ?? 0 };
  }
}

/** Shares of the whole, largest first, as lines `  NN.N%  key`. */
export function shareLines(totals: Map<string, number>, top: number): string[] {
  const all = [...totals.values()].reduce((a, b) => a + b, 0);
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, us]) => `${((100 * us) / all).toFixed(1).padStart(5)}%  ${key}`);
}
