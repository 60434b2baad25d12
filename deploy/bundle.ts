// The services as the image runs them: each process's entry point bundled by esbuild, at the
// path a file-by-file build gives it (dist/services/master/main.js, ...), which
// deploy/docker-entrypoint.sh starts, with the code it shares in chunks beside. The image's
// build stage runs this:
//
//   node --import tsx deploy/bundle.ts [OUT_DIR]      (default dist; `npm run build` too)
//
// Why: a master's start loaded 588 modules (265 of ours, 294 of node_modules), each resolved,
// read and linked by Node's loader one by one, the CommonJS ones scanned for their exports too,
// about 0.5 s of CPU on a slow machine, a quarter of its start (issue 35's goal 1: a master's
// first build within 2 s). Importing a master's service, medians of 9 fresh processes, in
// turns (2026-11-29 16:50, load 1.4-1.8): tsc's dist/ 536-538 ms of CPU, esbuild file by
// file 526-536, this bundle 350-410:
//
//   node node_modules/typescript/bin/tsc -p tsconfig.build.json --noCheck
//   RUNS=9 node_modules/.bin/node --import tsx load/fleet/import-cpu.ts dist/services/master/service.js
//   node --import tsx deploy/bundle.ts .data/b
//   RUNS=9 node_modules/.bin/node --import tsx load/fleet/import-cpu.ts .data/b/services/chunks/service-HASH.js
//     (HASH: the chunk .data/b/services/master/main.js imports)
//
// Left in node_modules, loaded as before:
// - what OpenTelemetry's instrumentation patches as it loads (pg, pg-pool, ioredis; bundled,
//   a traced process would make no spans for its queries), and OpenTelemetry itself;
// - what reads its own files at run time or loads by a computed name: bullmq (its Lua
//   scripts), pino (its transports' worker thread), nunjucks and nodemailer (loaded through
//   createRequire when a reporter needs them: master/reporters/packages.ts), and pg's optional
//   native driver.
//
// Each main.ts starts telemetry before it imports its service (core/telemetry/tracing.ts: the
// instrumentation patches pg, ioredis and http only as they load): so the bundles are split at
// that dynamic import, and a service's code and its packages load from a chunk of their own,
// after telemetry (services/chunks/; test/deploy/bundle.test.ts checks what each entry point
// loads before it).
//
// A source that finds files beside its own (core/db/migrate.ts its migrations, the API the web
// UI's build, core/version.ts package.json) asks `import.meta.url`; in a bundle that is the
// bundle's. Each such use is rewritten to the URL the file would have in a file-by-file build
// under the same folder (found from the bundle's own URL: the part before its last
// `/services/`), so those paths are what the image has always had.
import { readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

/**
 * The processes deploy/docker-entrypoint.sh starts (test/deploy/dockerfile.test.ts checks), in
 * two builds: the server image's, whose processes share chunks (services/chunks/), and the
 * worker's, which carries its own (services/worker/chunks/), so that the worker image holds
 * no API or master code.
 */
const BUILDS = [
  {
    entryPoints: [
      'services/api/main.ts',
      'services/master/main.ts',
      'services/core/db/migrate-cli.ts',
      'services/api/auth-cli.ts',
    ],
    chunks: 'services/chunks',
  },
  { entryPoints: ['services/worker/main.ts'], chunks: 'services/worker/chunks' },
] as const;

export const ENTRY_POINTS: readonly string[] = BUILDS.flatMap((b) => b.entryPoints);

export const EXTERNAL = [
  'pg',
  'pg-pool',
  'pg-native',
  'ioredis',
  '@opentelemetry/*',
  'bullmq',
  'pino',
  'nunjucks',
  'nodemailer',
];

const posixPath = (p: string) => p.split(sep).join('/');

/** `import.meta.url` in a source under services/ made the URL of its file-by-file output. */
const ownUrls: Plugin = {
  name: 'own-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /[\\/]services[\\/].*\.ts$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const own = posixPath(relative(ROOT, args.path)).replace(/\.ts$/, '.js');
      const root = "import.meta.url.slice(0, import.meta.url.lastIndexOf('/services/') + 1)";
      return {
        contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify(own)}, ${root}).href`),
        loader: 'ts',
      };
    });
  },
};

/**
 * @databases/pg-config replaced by its default (deploy/pg-config-defaults.ts says why): with
 * it, cosmiconfig is no longer loaded by any bundle.
 */
const pgConfigDefaults: Plugin = {
  name: 'pg-config-defaults',
  setup(b) {
    b.onResolve({ filter: /^@databases\/pg-config$/ }, () => ({
      path: join(ROOT, 'deploy/pg-config-defaults.ts'),
    }));
  },
};

/** Bundles every entry point into `outDir` (relative to the repository unless absolute). */
export async function bundleServices(outDir = 'dist'): Promise<string[]> {
  const out = resolve(ROOT, outDir);
  const written: string[] = [];
  for (const b of BUILDS) written.push(...(await bundle(b.entryPoints, b.chunks, out)));
  return written;
}

async function bundle(entryPoints: readonly string[], chunks: string, out: string): Promise<string[]> {
  const result = await build({
    // The metafile's paths are relative to it.
    absWorkingDir: ROOT,
    entryPoints: entryPoints.map((e) => join(ROOT, e)),
    outdir: out,
    outbase: ROOT,
    entryNames: '[dir]/[name]',
    chunkNames: `${chunks}/[name]-[hash]`,
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node26',
    tsconfig: join(ROOT, 'tsconfig.json'),
    external: EXTERNAL,
    // Bundled CommonJS packages call require() for Node's own modules (and pg's driver):
    // an ES module has none, so each file makes one for itself.
    banner: {
      js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
    },
    plugins: [ownUrls, pgConfigDefaults],
    metafile: true,
    logLevel: 'warning',
  });
  return Object.keys(result.metafile.outputs).map((f) => resolve(ROOT, f));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const files = await bundleServices(process.argv[2] ?? 'dist');
  console.log(`bundled ${ENTRY_POINTS.length} entry points into ${files.length} files`);
}
