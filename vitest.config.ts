import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Suites create their own databases from templates, so files can run side by side.
    fileParallelism: true,
    maxWorkers: 2,
    reporters: ['default'],
  },
});
