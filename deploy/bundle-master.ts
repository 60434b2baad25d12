// The master's code as one bundle: what the image's `master` command, `npm start` and the
// suite's masters run (the benchmark's too, through test/helpers/service-build.ts).
//
//   node deploy/bundle-master.ts OUTDIR        # OUTDIR/main.js, its chunk, OUTDIR/migrations
//
// Why: a master imports some 290 of services/' modules before it does anything, and Node
// resolves, reads and links each one. Measured (load/results/fleet.md, 2026-11-29 00:44,
// load 2.6-7.8): importing service.js took 329 and 335 ms of CPU bundled against 522 and 500
// ms as tsc's files, in turn (load/fleet/import-cpu.ts): 0.15-0.2 s of every start, the
// largest piece of a start's CPU left that one change removes. The figures of this change
// are in its sitting of fleet.md (2026-11-29 03:30-05:10).
//
// How, and why each way:
// - Packages stay outside (`packages: 'external'`): node_modules is the image's own, and
//   telemetry must patch pg, ioredis and http as they load.
// - Split at main.ts's dynamic import of service.js: main.ts starts telemetry before the
//   rest is loaded (core/telemetry/tracing.ts), so service.js's packages must not become
//   static imports of the entry, which one file would make them (esbuild hoists them).
// - Every file lands in OUTDIR itself and the migrations are copied to OUTDIR/migrations:
//   core/db/migrate.ts looks for them beside its own module (import.meta.url), which in the
//   bundle is a file of OUTDIR. core/version.ts walks up to package.json, as from dist/.
import { cpSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const ROOT = resolve(import.meta.dirname, '..');

export interface BundleOptions {
  /** esbuild's sourcemap setting: 'linked' (a .map beside each file) unless said. */
  sourcemap?: 'linked' | 'inline';
}

/** Bundles services/master/main.ts into `outdir` (replaced), with the migrations beside it. */
export async function bundleMaster(outdir: string, opts: BundleOptions = {}): Promise<void> {
  rmSync(outdir, { recursive: true, force: true });
  await build({
    entryPoints: { main: join(ROOT, 'services/master/main.ts') },
    outdir,
    bundle: true,
    splitting: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node.split('.')[0]}`,
    tsconfig: join(ROOT, 'tsconfig.json'),
    chunkNames: '[name]-[hash]',
    sourcemap: opts.sourcemap ?? 'linked',
    logLevel: 'error',
  });
  cpSync(join(ROOT, 'services/core/db/migrations'), join(outdir, 'migrations'), { recursive: true });
}

if (process.argv[1] && resolve(process.argv[1]) === import.meta.filename) {
  const outdir = process.argv[2];
  if (!outdir) {
    console.error('usage: node deploy/bundle-master.ts OUTDIR');
    process.exit(2);
  }
  await bundleMaster(resolve(outdir));
}
