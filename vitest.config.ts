import { defineConfig } from 'vitest/config';
import Interleaved, { E2E_PROJECT } from './test/sequencer.js';

// End-to-end: the files that run the services as processes (the API, masters, workers,
// npm start itself). A project of their own, run beside the in-process tests in one pool
// (test/sequencer.ts spreads them out); `npm test -- --project e2e` runs them alone.
const E2E = [
  'test/e2e/**/*.test.ts',
  'test/processes/**/*.test.ts',
  'test/deploy/node-runtime.test.ts',
  'test/api/events/cluster.test.ts',
  'test/api/security/fuzz.test.ts',
  'test/web/ui.test.ts',
];

const common = {
  pool: 'forks' as const,
  // Suites create their own databases from templates, so files can run side by side.
  fileParallelism: true,
};

export default defineConfig({
  test: {
    // Once for the whole run (the template databases every suite copies); the projects
    // below do not repeat it.
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Two cores, and a third slot that the end-to-end files, mostly waiting on their
    // processes, share with the rest.
    maxWorkers: 3,
    reporters: ['default'],
    sequence: { sequencer: Interleaved },
    projects: [
      {
        test: {
          ...common,
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: E2E,
          // Generous for a loaded machine: only a test that fails waits these out.
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          ...common,
          name: E2E_PROJECT,
          include: E2E,
          // Processes start slowly on a loaded machine; only a test that fails waits these out.
          testTimeout: 180_000,
          hookTimeout: 240_000,
        },
      },
    ],
  },
});
