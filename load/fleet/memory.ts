// Phase 0's readings of the masters' memory (run.ts): resident memory always; with FLEET_HEAP,
// also what each master's heap holds after a full collection (inspector.ts), and with
// FLEET_HEAP_SNAPSHOT=DIR a heap snapshot of each master at each reading, for
// heap-classes.ts to compare by constructor.
//
// RSS alone read 38-43 KiB a worker at 2026-11-29 07:37 and 10-14 at 04:44, on code whose
// per-worker objects had not changed: it follows the heap's growth and the garbage not yet
// collected, which is not what the workers hold (load/results/fleet.md, 2026-11-29 08:23, has
// both side by side). With snapshots, the RSS columns are not comparable: the first snapshot
// grows the master's RSS by about 120 MiB before the second reading.
import { join } from 'node:path';
import { Inspector } from './inspector.js';
import { rssKiB } from './procstat.js';

export interface MeasuredMaster {
  index: number;
  pid: number;
  /** The master's --inspect port, when FLEET_HEAP started it with one. */
  inspectPort?: number;
}

export interface MemoryReading {
  rssKiB: number;
  /** After a full collection: the V8 heap's used KiB, and the backing stores outside it. */
  heap?: { usedKiB: number; totalKiB: number; externalKiB: number };
}

/** Each master's memory now; `label` names the snapshots' files (fleet-N.LABEL.heapsnapshot). */
export async function readMemory(
  masters: readonly MeasuredMaster[],
  label: string,
  snapshotDir?: string,
): Promise<MemoryReading[]> {
  const out: MemoryReading[] = [];
  // One at a time: a collection and a snapshot each take one of the two cores for seconds.
  for (const m of masters) {
    if (m.inspectPort === undefined) {
      out.push({ rssKiB: rssKiB(m.pid) });
      continue;
    }
    const inspector = await Inspector.open(m.inspectPort);
    try {
      const { heapUsed, heapTotal, external } = await inspector.afterGc();
      // RSS read after the collection too, so that both columns describe the same moment.
      const heap = { usedKiB: heapUsed / 1024, totalKiB: heapTotal / 1024, externalKiB: external / 1024 };
      out.push({ rssKiB: rssKiB(m.pid), heap });
      if (snapshotDir)
        await inspector.snapshot(join(snapshotDir, `fleet-${m.index + 1}.${label}.heapsnapshot`));
    } finally {
      inspector.close();
    }
  }
  return out;
}

/** Phase 0's table: each master's memory with the first workers and with all, and the difference a worker. */
export function memoryTable(
  masters: readonly MeasuredMaster[],
  before: readonly MemoryReading[],
  after: readonly MemoryReading[],
  workersOf: (master: number) => { all: number; rest: number },
): string[] {
  const heap = before[0]?.heap !== undefined;
  const mib = (kib: number) => (kib / 1024).toFixed(heap ? 1 : 0);
  const lines = [
    `| master | workers | RSS with the first tenth (MiB) | RSS with them all (MiB) | RSS KiB per worker of the rest |${heap ? ' heap used after GC, first tenth (MiB) | with all (MiB) | heap KiB per worker of the rest | external KiB per worker | heap size, first tenth, with all (MiB) |' : ''}`,
    `|---|---|---|---|---|${heap ? '---|---|---|---|---|' : ''}`,
  ];
  for (const m of masters) {
    const { all, rest } = workersOf(m.index);
    const [b, a] = [before[m.index]!, after[m.index]!];
    let line = `| fleet-${m.index + 1} | ${all} | ${mib(b.rssKiB)} | ${mib(a.rssKiB)} | ${((a.rssKiB - b.rssKiB) / rest).toFixed(1)} |`;
    if (b.heap && a.heap)
      line += ` ${mib(b.heap.usedKiB)} | ${mib(a.heap.usedKiB)} | ${((a.heap.usedKiB - b.heap.usedKiB) / rest).toFixed(1)} | ${((a.heap.externalKiB - b.heap.externalKiB) / rest).toFixed(1)} | ${mib(b.heap.totalKiB)}, ${mib(a.heap.totalKiB)} |`;
    lines.push(line);
  }
  return lines;
}
