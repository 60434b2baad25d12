// Builds the web UI into services/web/dist: index.html and content-hashed files in assets/,
// each also precompressed (.br, .gz) for the API pods to send as they are
// (services/api/http/web-ui.ts). Checks the first-load budget: the JavaScript index.html
// loads, gzipped, at most 150 KB; a bigger bundle fails the build (and so npm test).
//
//   node --import tsx services/web/build.ts            # what npm start, npm test and the image run
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

export const JS_BUDGET_GZIP_BYTES = 150 * 1024;

const here = fileURLToPath(new URL('.', import.meta.url));
const dist = join(here, 'dist');

export interface BuildReport {
  js: string[];
  css: string[];
  jsGzipBytes: number;
  cssGzipBytes: number;
}

/** The release's version, from the repository's package.json (shown on `#/about`). */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(here, '../../package.json'), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}

export async function buildWebUi(outDir: string = dist): Promise<BuildReport> {
  rmSync(outDir, { recursive: true, force: true });
  const assets = join(outDir, 'assets');
  mkdirSync(assets, { recursive: true });
  const result = await build({
    entryPoints: [join(here, 'src/main.tsx')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: assets,
    entryNames: 'app-[hash]',
    assetNames: '[name]-[hash]',
    metafile: true,
    legalComments: 'none',
    define: { __FLOTILLA_VERSION__: JSON.stringify(packageVersion()) },
    logLevel: 'warning',
    // The UI may not run server code: anything outside services/web/src but the shared
    // types (erased at build) and preact fails the build here.
    plugins: [
      {
        name: 'only-ui-code',
        setup(b) {
          b.onResolve({ filter: /^\.\.?\// }, (args) => {
            if (
              args.importer &&
              !args.importer.includes(`${join(here, 'src')}`) &&
              !args.importer.includes('node_modules')
            ) {
              return { errors: [{ text: `${args.importer} is not UI code` }] };
            }
            return undefined;
          });
        },
      },
    ],
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const js = outputs.filter((f) => f.endsWith('.js'));
  const css = outputs.filter((f) => f.endsWith('.css'));
  if (js.length !== 1 || css.length > 1) throw new Error(`unexpected outputs: ${outputs.join(', ')}`);
  const gz = (f: string) => gzipSync(readFileSync(join(assets, f)), { level: 9 }).length;
  const report: BuildReport = {
    js,
    css,
    jsGzipBytes: js.reduce((n, f) => n + gz(f), 0),
    cssGzipBytes: css.reduce((n, f) => n + gz(f), 0),
  };
  const template = readFileSync(join(here, 'index.html'), 'utf8');
  const html = template
    .replace('<!--styles-->', css.map((f) => `<link rel="stylesheet" href="assets/${f}">`).join(''))
    .replace('<!--scripts-->', js.map((f) => `<script type="module" src="assets/${f}"></script>`).join(''));
  writeFileSync(join(outDir, 'index.html'), html);
  for (const f of [...outputs.map((o) => join('assets', o)), 'index.html']) {
    const p = join(outDir, f);
    const data = readFileSync(p);
    writeFileSync(`${p}.gz`, gzipSync(data, { level: 9 }));
    writeFileSync(`${p}.br`, brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
  }
  writeFileSync(join(outDir, 'build.json'), `${JSON.stringify(report, null, 2)}\n`);
  if (report.jsGzipBytes > JS_BUDGET_GZIP_BYTES) {
    throw new Error(
      `first-load JavaScript is ${report.jsGzipBytes} bytes gzipped, over the ${JS_BUDGET_GZIP_BYTES} budget`,
    );
  }
  return report;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const r = await buildWebUi();
  console.log(
    `web UI built: ${r.js.join(', ')} ${(r.jsGzipBytes / 1024).toFixed(1)} KB gzipped (budget ${JS_BUDGET_GZIP_BYTES / 1024} KB), ${r.css.join(', ')} ${(r.cssGzipBytes / 1024).toFixed(1)} KB`,
  );
}
