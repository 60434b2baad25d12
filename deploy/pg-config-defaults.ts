// What the bundles give @databases/pg in place of @databases/pg-config (deploy/bundle.ts).
// @databases/pg asks that package one thing as it loads: which environment variable holds a
// connection string when none is passed, from a `pg` configuration file it looks for with
// cosmiconfig from the working directory up. Flotilla always passes DATABASE_URL's value and
// ships no such file, so the answer is the package's own default. Loading the real package
// (cosmiconfig, and a schema of settings for its code generator) and searching cost a fresh
// process 55-65 ms of CPU (`require('@databases/pg-config').getPgConfigSync()`, five runs).
// Importing the master's service chunk, four pairs of 15 imports each, in turns (2026-11-30,
// load 1.4-1.6; `RUNS=15 node_modules/.bin/node --import tsx load/fleet/import-cpu.ts
// .data/b/services/chunks/service-HASH.js` on a bundle without and with this): medians
// 328/337, 366/343, 389/347, 390/362 ms, 23-42 ms less in three pairs of four.

/** @databases/pg-config's default, the one setting @databases/pg reads. */
export function getPgConfigSync(): { connectionStringEnvironmentVariable: string } {
  return { connectionStringEnvironmentVariable: 'DATABASE_URL' };
}
