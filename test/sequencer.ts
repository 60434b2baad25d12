// The order test files start in: vitest's own (the longest first, by the last run's times),
// then the end-to-end files spread among the rest, so that a few run beside the in-process
// ones at any time instead of all at once. They are mostly waiting on the processes they
// start, which a slot running in-process tests makes up for; all at once, their processes
// would take every core.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export const E2E_PROJECT = 'e2e';

export default class Interleaved extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const e2e = sorted.filter((f) => f.project.name === E2E_PROJECT);
    const rest = sorted.filter((f) => f.project.name !== E2E_PROJECT);
    if (e2e.length === 0 || rest.length === 0) return sorted;
    const every = Math.max(1, Math.floor(rest.length / e2e.length));
    const out: TestSpecification[] = [];
    for (let i = 0; i < rest.length || e2e.length > 0; i++) {
      if (i % every === 0 && e2e.length > 0) out.push(e2e.shift()!);
      if (i < rest.length) out.push(rest[i]!);
    }
    return out;
  }
}
