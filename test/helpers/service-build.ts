// The services' JavaScript, transpiled once per `vitest run` (test/global-setup.ts) for the
// processes tests start, instead of tsx transpiling and resolving through its loader hooks
// in each of them. The transpiler is the one tsx runs (esbuild, file by file, the project's
// tsconfig), so the code the processes run is what `npm run api` runs; `npm start`
// (test/deploy/node-runtime.test.ts) still runs through tsx, and the image's tsc build has
// its own test (test/deploy/image-layout.test.ts).
//
// Measured (load/results/test-suite.md, 2026-11-24): a master process importing its code took
// 1.1-1.4 CPU seconds through tsx and 0.6 s from this build; four process-heavy test files
// 35-41 CPU seconds instead of 53.
//
// The folder sits inside the repository so that the services' imports find node_modules
// and package.json's "type": "module" as from services/; the files the services read beside
// their code (the migrations, the web UI's build) are links to the real ones.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { build } from 'esbuild';
import { bundleServices } from '../../deploy/bundle.js';

const ROOT = resolve(import.meta.dirname, '../..');
/** Set for every test process by the global setup: the folder holding services/. */
export const SERVICES_BUILD_ENV = 'FLOTILLA_TEST_SERVICES_BUILD';
const LINKED = ['services/core/db/migrations', 'services/web'];
/** In a build whose files carry their source maps: its processes are started to use them. */
const MAPS_MARKER = '.source-maps';

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (LINKED.includes(relative(ROOT, path))) continue;
    if (statSync(path).isDirectory()) sources(path, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/**
 * Transpiles services/ (but the web UI's) into a new folder under .data/; returns it. With
 * `bundled: true` the folder holds the image's bundles instead (deploy/bundle.ts: the
 * processes' entry points only, no maps), as a benchmark of the image's processes runs them.
 * With `sourceMaps: false` the files carry none and their processes start without
 * --enable-source-maps, as the image runs its processes: what a benchmark measures (a master's
 * start to ready cost 1.27 s of CPU with the maps, median of 7, and 1.18 s as the image runs
 * it, load/results/fleet.md, 2026-11-29 13:20).
 */
export async function buildServices(opts: { sourceMaps?: boolean; bundled?: boolean } = {}): Promise<string> {
  const maps = !opts.bundled && (opts.sourceMaps ?? true);
  mkdirSync(join(ROOT, '.data'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, '.data', 'test-services-'));
  try {
    // Readable as services/ is, by a process a test starts as another user.
    chmodSync(dir, 0o755);
    if (opts.bundled) await bundleServices(dir);
    else
      await build({
        entryPoints: sources(join(ROOT, 'services')),
        outdir: dir,
        outbase: ROOT,
        bundle: false,
        platform: 'node',
        format: 'esm',
        target: `node${process.versions.node.split('.')[0]}`,
        tsconfig: join(ROOT, 'tsconfig.json'),
        // A child's stack traces name the .ts lines, as under tsx (started with
        // --enable-source-maps: serviceCommand).
        sourcemap: maps ? 'inline' : false,
        logLevel: 'error',
      });
    if (maps) writeFileSync(join(dir, MAPS_MARKER), '');
    for (const link of LINKED) symlinkSync(join(ROOT, link), join(dir, link));
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return dir;
}

/**
 * The command line that runs a script of services/ (`services/api/main.ts`, a path from the
 * repository's root): from the global setup's build when there is one, else through tsx (a
 * script outside vitest: load/claims, load/chaos).
 */
export function serviceCommand(script: string): string[] {
  const built = process.env[SERVICES_BUILD_ENV];
  if (!built) return ['--import', 'tsx', join(ROOT, script)];
  const code = join(built, script.replace(/\.ts$/, '.js'));
  return existsSync(join(built, MAPS_MARKER)) ? ['--enable-source-maps', code] : [code];
}
