// The order test files start in. The files that run in a process of their own (the
// end-to-end files, mostly waiting on the processes they start, and the few in-process files
// that cannot share one) go longest first, one between every few in-process files: a few run
// beside the in-process ones at any time instead of all at once (all at once, their processes
// would take every core), and the longest start first, so that the suite's floor (its longest
// file) overlaps everything else. The in-process files between them stay together in runs:
// vitest hands the next file to a process that has just finished one only when that file is
// of the same project, so each own-process file in the queue costs one shared process's end.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export const E2E_PROJECT = 'e2e';

// The longest files, first in this order whatever vitest's cache of the last run's times
// says: CI starts without that cache, and vitest then orders by file size, which says little
// of a file's time (load/RESULTS.md §10: faults' two clusters, the frozen master and
// Buildbot's workers are the floor, 50-90 s each on a quiet machine).
const LONGEST = [
  'test/e2e/faults',
  'test/e2e/buildbot-worker-frozen-master.test.ts',
  'test/e2e/buildbot-workers.test.ts',
  'test/web/ui.test.ts',
  'test/deploy/node-runtime.test.ts',
  'test/e2e/mixed-cluster.test.ts',
];

function rank(spec: TestSpecification): number {
  const path = spec.moduleId.slice(spec.project.config.root.length + 1);
  const i = LONGEST.findIndex((prefix) => path.startsWith(prefix));
  return i === -1 ? LONGEST.length : i;
}

export default class Interleaved extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Array.prototype.sort is stable: within a rank, vitest's own order (longest first by
    // its cache, or largest first without one) stays.
    const own = sorted.filter((f) => f.project.config.isolate !== false).sort((a, b) => rank(a) - rank(b));
    const shared = sorted.filter((f) => f.project.config.isolate === false);
    if (own.length === 0 || shared.length === 0) return [...own, ...shared];
    const every = Math.max(1, Math.floor(shared.length / own.length));
    const out: TestSpecification[] = [];
    for (let i = 0; i < shared.length || own.length > 0; i++) {
      if (i % every === 0 && own.length > 0) out.push(own.shift()!);
      if (i < shared.length) out.push(shared[i]!);
    }
    return out;
  }
}
