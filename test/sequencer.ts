// The order test files start in: the files that run in a process of their own (the
// end-to-end files, mostly waiting on the processes they start, and the few in-process files
// that cannot share one), longest first, then the in-process files that share processes.
// A full `npm test` runs the end-to-end project in a vitest of its own (deploy/local/test.sh),
// where this orders its files longest first; the rest applies to a run of chosen files.
//
// Why all of them first: vitest hands a shared process its next file only when the next file
// in the queue is of the same project at the moment the process finishes one; when an
// own-process file heads the queue instead, the shared process ends and a new one is started
// for the next shared file. Spread among the in-process files (one every five, as here until
// 2026-11-25), the 27 own-process files ended 25 of the unit project's processes
// early: 55 vitest processes in a full run, each 0.55 CPU s before its first file began
// (vitest's runtime), and every shared module imported again in each. With all of them first,
// an own-process file only ever starts when another one ends, and the unit project runs its
// 145 files in three processes (load/results/test-suite.md).
//
// The longest start first, whatever vitest's cache of the last run's times says: CI starts
// without that cache, and vitest then orders by file size, which says little of a file's
// time; the suite's floor (its longest file) then overlaps everything else.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export const E2E_PROJECT = 'e2e';

// The longest own-process files, in this order (load/results/test-suite.md: faults' clusters, the
// frozen master and Buildbot's workers are the floor, 40-160 s each).
const LONGEST = [
  'test/e2e/faults',
  'test/e2e/buildbot-worker-frozen-master.test.ts',
  'test/e2e/redis-failover-builds.test.ts',
  'test/e2e/buildbot-workers.test.ts',
  'test/web/ui.test.ts',
  'test/deploy/node-runtime.test.ts',
  'test/e2e/masters.test.ts',
  'test/e2e/mixed-cluster.test.ts',
];

function rank(spec: TestSpecification): number {
  const path = spec.moduleId.slice(spec.project.config.root.length + 1);
  const i = LONGEST.findIndex((prefix) => path.startsWith(prefix));
  return i === -1 ? LONGEST.length : i;
}

export default class OwnProcessesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Array.prototype.sort is stable: within a rank, vitest's own order (longest first by
    // its cache, or largest first without one) stays.
    const own = sorted.filter((f) => f.project.config.isolate !== false).sort((a, b) => rank(a) - rank(b));
    const shared = sorted.filter((f) => f.project.config.isolate === false);
    return [...own, ...shared];
  }
}
