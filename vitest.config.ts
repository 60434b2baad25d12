import { defineConfig } from 'vitest/config';
import OwnProcessesFirst, { E2E_PROJECT } from './test/sequencer.js';

// End-to-end: the files that run the services as processes (the API, masters, workers,
// npm start itself). A project of their own: a full `npm test` runs it in a vitest process of
// its own beside the other projects' (deploy/local/test.sh says why), and
// `npm test -- --project e2e` runs it alone.
const E2E = [
  'test/e2e/**/*.test.ts',
  'test/processes/**/*.test.ts',
  'test/deploy/node-runtime.test.ts',
  'test/api/events/cluster.test.ts',
  'test/api/security/fuzz.test.ts',
  'test/web/ui.test.ts',
  'test/master/builds/long-line.test.ts',
  'test/load/fleet-forces.test.ts',
];

// In-process files that change what every later file in their process would see, and cannot
// put it back: each gets a fresh process, as every file did before the unit project shared
// them. telemetry.test starts OpenTelemetry's SDK, which registers the process-wide tracer
// provider and loader hooks that patch http, pg and ioredis for good.
// connection-memory.test counts objects in the heap (v8.queryObjects, a full collection and a
// walk of the whole heap, four times): in a shared process, whose heap holds every module of
// the files before it, that cost 25.5 CPU s of a full run, 1.5% of the suite's files (SUITE_FILE_CPU,
// load/results/test-suite.md, 2026-11-30); in a process of its own, a few.
const ISOLATED = ['test/core/telemetry.test.ts', 'test/master/workers/connection-memory.test.ts'];

// SUITE_FILE_CPU=FILE appends each test file's CPU seconds to FILE (test/helpers/file-cpu.ts;
// load/suite-files.ts sorts them).
const setupFiles = process.env.SUITE_FILE_CPU ? ['test/helpers/file-cpu.ts'] : [];

const common = {
  pool: 'forks' as const,
  setupFiles,
  // Suites create their own databases from templates, so files can run side by side.
  fileParallelism: true,
  // Generous for a loaded machine: only a test that fails waits these out.
  testTimeout: 120_000,
  hookTimeout: 120_000,
};

export default defineConfig({
  test: {
    // Once for the whole run (the template databases every suite copies); the projects
    // below do not repeat it.
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // A run of chosen files or projects (`npm test -- ...`): two cores, and a third slot that
    // the end-to-end files, mostly waiting on their processes, share with the rest. A full
    // run sets each part's own (deploy/local/test.sh: E2E_WORKERS, UNIT_WORKERS).
    maxWorkers: 3,
    reporters: ['default'],
    sequence: { sequencer: OwnProcessesFirst },
    projects: [
      {
        test: {
          ...common,
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...E2E, ...ISOLATED],
          // One process runs many of these files in turn (the sequencer queues them after every
          // own-process file, so that none ends a shared process early):
          // a fresh process and its imports cost each file 0.5-0.8 CPU seconds, 60 to 100 of
          // the suite's (load/RESULTS.md §10). A file that changes process-wide state (the
          // time zone, a global, the environment) puts it back in its afterAll or finally.
          isolate: false,
        },
      },
      {
        test: {
          ...common,
          name: 'isolated',
          include: ISOLATED,
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
