// The image's bundles (deploy/bundle.ts): each process's main.js loads, before its service,
// nothing that OpenTelemetry's instrumentation must patch as it loads, and the sources that
// find files beside their own are given the URLs of a file-by-file build. That the bundles run
// (migrate, api with its web UI, master, worker, through the image's entrypoint) is
// image-layout.test.ts's.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleServices, ENTRY_POINTS } from '../../deploy/bundle.js';

// As core/telemetry/tracing.ts's PATCHED: loaded before telemetry starts, they go unpatched.
const PATCHED = ['pg', 'pg-pool', 'ioredis', 'http', 'https', 'node:http', 'node:https'];

let out: string;
let written: string[];
beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'flotilla-bundle-'));
  written = await bundleServices(out);
});
afterAll(() => {
  if (out) rmSync(out, { recursive: true, force: true });
});

/** The specifiers of a file's static imports (`import ... from "x"`, `import "x"`, re-exports). */
function staticImports(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)(?:import|export)\s*(?:[^'"`;()]*?\sfrom\s*)?["']([^"']+)["'];/g))
    found.push(m[1]!);
  return found;
}

/**
 * What a file loads, following the bundle's own files: by its static imports only, or with
 * `dynamic`, by its `import("...")`s too. The files reached (itself among them) and the packages.
 */
function reached(file: string, dynamic = false): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (f: string) => {
    if (files.has(f)) return;
    files.add(f);
    const text = readFileSync(f, 'utf8');
    const lazy = dynamic ? [...text.matchAll(/import\("([^"]+)"\)/g)].map((m) => m[1]!) : [];
    for (const spec of [...staticImports(text), ...lazy]) {
      if (spec.startsWith('.')) visit(resolve(dirname(f), spec));
      else packages.add(spec);
    }
  };
  visit(file);
  return { files, packages };
}

/** Every package a file loads by static imports, following the bundle's own files. */
const loadedStatically = (file: string): Set<string> => reached(file).packages;

describe('deploy/bundle.ts', () => {
  it('names the files it wrote, each entry point among them', () => {
    for (const f of written) expect(existsSync(f), f).toBe(true);
    for (const e of ENTRY_POINTS) expect(written).toContain(join(out, e.replace(/\.ts$/, '.js')));
  });

  it('reads static imports as esbuild writes them', () => {
    expect(
      staticImports(
        'import { a as b } from "../chunks/chunk-X.js";\nimport pg from "pg";\nimport {\n  c,\n  d\n} from "ioredis";\nimport "./side.js";\nconst x = await import("./lazy.js");\nexport { e } from "./e.js";\n',
      ),
    ).toEqual(['../chunks/chunk-X.js', 'pg', 'ioredis', './side.js', './e.js']);
  });

  it("loads each process's service after its telemetry, and nothing patched before it", () => {
    for (const main of ENTRY_POINTS.filter((e) => e.endsWith('/main.ts'))) {
      const file = join(out, main.replace(/\.ts$/, '.js'));
      const text = readFileSync(file, 'utf8');
      expect(text, main).toMatch(/await startTelemetry\(/);
      expect(text, main).toMatch(/import\("\.\.?\/chunks\/service-[A-Z0-9]+\.js"\)/);
      const early = loadedStatically(file);
      expect(
        [...early].filter((p) => PATCHED.includes(p)),
        main,
      ).toEqual([]);
    }
    // What the check would catch: the master's service does load them.
    const master = readFileSync(join(out, 'services/master/main.js'), 'utf8');
    const service = master.match(/import\("(\.\.\/chunks\/service-[A-Z0-9]+\.js)"\)/)![1]!;
    const later = loadedStatically(resolve(out, 'services/master', service));
    expect(later.has('pg')).toBe(true);
    expect(later.has('ioredis')).toBe(true);
  });

  it('gives @databases/pg its default setting, without cosmiconfig or a search for a file', () => {
    const all = readdirSync(out, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.js'))
      .map((f) => readFileSync(join(out, f), 'utf8'))
      .join('\n');
    // Bundled CommonJS loads it by require("cosmiconfig"), not by an import the checks above read.
    expect(all).not.toContain('"cosmiconfig"');
    // @databases/pg still asks, and deploy/pg-config-defaults.ts answers.
    expect(all).toContain('connectionStringEnvironmentVariable: "DATABASE_URL"');
  });

  it("keeps the worker's code in its own folder, which the worker image copies alone", () => {
    const { files } = reached(join(out, 'services/worker/main.js'), true);
    expect(files.size).toBeGreaterThan(1);
    for (const f of files) expect(f.startsWith(join(out, 'services/worker/')), f).toBe(true);
  });

  it('gives a source that finds files beside it the URL of its file-by-file build', () => {
    const texts = readdirSync(out, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.js'))
      .map((f) => readFileSync(join(out, f), 'utf8'));
    const all = texts.join('\n');
    // core/db/migrate.ts finds its migrations beside it; the API finds the web UI's build.
    const root = 'import.meta.url.slice(0, import.meta.url.lastIndexOf("/services/") + 1)';
    expect(all).toContain(`new URL("services/core/db/migrate.js", ${root})`);
    expect(all).toContain(`new URL("services/api/http/web-ui.js", ${root})`);
    // No other use of the bundle's own URL than those and each file's require().
    const uses = all.split('import.meta.url').length - 1;
    const rewritten = all.split(root).length - 1;
    const banners = all.split('__bundleRequire(import.meta.url)').length - 1;
    expect(banners).toBe(texts.length);
    expect(uses).toBe(banners + 2 * rewritten);
  });
});
