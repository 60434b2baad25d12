// The shape of the code that review found drifting (issue 14 §4, §5, §6), checked so it
// cannot drift back: no import circles (type-only imports count: they couple two files as
// much as any), none between the API's folders either, the arrows between services that
// DESIGN.md draws, load/ reaching services only through core, and no file of the API, the
// master or the worker longer than 400 lines.
// Reads the sources' tokens (helpers/module-imports.ts), so an import written any way
// TypeScript accepts is seen, and one inside a string or a comment is not.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { moduleImports } from './helpers/module-imports.js';

const ROOT = resolve(import.meta.dirname, '..');

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sources(path, out);
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Each file's relative imports (static, dynamic, `export … from`, type-only), resolved to files. */
function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets: string[] = [];
    for (const fileName of moduleImports(readFileSync(file, 'utf8'))) {
      if (!fileName.startsWith('.')) continue;
      const base = resolve(dirname(file), fileName);
      const stem = base.replace(/\.js$/, '');
      const found = [`${stem}.ts`, `${stem}.tsx`, join(stem, 'index.ts'), base].find((c) => existsSync(c));
      // An import the scanner cannot place would hide its edge; tsc would reject it anyway.
      if (!found) throw new Error(`${relative(ROOT, file)}: cannot resolve ${fileName}`);
      targets.push(found);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The strongly connected components with more than one file, or a file importing itself (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

// A file past this holds more than one concern; split it along them (issue 14 §4).
const MAX_LINES = 400;

const service = (file: string): string | null =>
  /^services\/([^/]+)\//.exec(relative(ROOT, file))?.[1] ?? null;

describe('the code’s shape', () => {
  const files = ['services', 'test', 'load', 'deploy'].flatMap((d) => sources(join(ROOT, d)));
  const graph = importGraph(files);

  it('finds a circle when there is one (the detector itself)', () => {
    const g = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
    ]);
    expect(circles(g)).toEqual([['a', 'b', 'c'], ['e']]);
    const acyclic = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', []],
    ]);
    expect(circles(acyclic)).toEqual([]);
  });

  it('has no import circles, type-only imports included', () => {
    expect(graph.size).toBeGreaterThan(400);
    const found = circles(graph).map((c) => c.map((f) => relative(ROOT, f)));
    expect(found).toEqual([]);
  });

  // Files may be circle-free while their folders are not (http/ importing read/, read/ importing
  // http/'s ETag helper): then no folder can be read, tested or moved without the other, and a
  // reader follows a concern up and down the tree. The API's folders form layers (issue 29 §2):
  // reply/ and errors/ at the bottom, http/ at the top; an arrow back up is a helper that
  // belongs lower down.
  it("keeps the API's folders free of circles between them", () => {
    const folderOf = (file: string): string | null =>
      /^services\/api\/([^/]+)\//.exec(relative(ROOT, file))?.[1] ?? null;
    const folders = new Map<string, Set<string>>();
    for (const [file, targets] of graph) {
      const from = folderOf(file);
      if (from === null) continue;
      const out = folders.get(from) ?? new Set<string>();
      folders.set(from, out);
      for (const target of targets) {
        const to = folderOf(target);
        if (to !== null && to !== from) out.add(to);
      }
    }
    expect(folders.size).toBeGreaterThan(8);
    expect(circles(new Map([...folders].map(([f, to]) => [f, [...to]])))).toEqual([]);
  });

  it('keeps the arrows: core imports no service, and services never import each other', () => {
    const wrong: string[] = [];
    for (const [file, targets] of graph) {
      const from = service(file);
      if (from === null) continue;
      for (const target of targets) {
        const to = service(target);
        if (to === null || to === from || to === 'core') continue;
        wrong.push(`${relative(ROOT, file)} -> ${relative(ROOT, target)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  // load/ measures the services as they run: as processes, over HTTP and websockets, and
  // through core (the database's migrations and pool, the event bus, the live log stream),
  // the library every service shares. Only load/bench/'s in-process benchmarks time one piece
  // of a service by itself (bench/miss-cost.ts: the API's query engine without HTTP), and
  // those import that piece; anywhere else, an import of a service's own files would
  // measure something other than what runs.
  it("keeps load/ to core, but for load/bench/'s in-process benchmarks", () => {
    const wrong: string[] = [];
    for (const [file, targets] of graph) {
      const from = relative(ROOT, file);
      if (!from.startsWith('load/') || from.startsWith('load/bench/')) continue;
      for (const target of targets) {
        const to = service(target);
        if (to !== null && to !== 'core') wrong.push(`${from} -> ${relative(ROOT, target)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it(`keeps every file of the API, the master and the worker within ${MAX_LINES} lines`, () => {
    const long = [...graph.keys()]
      .filter((f) => ['api', 'master', 'worker'].includes(service(f) ?? ''))
      .map((f) => [relative(ROOT, f), readFileSync(f, 'utf8').split('\n').length - 1] as const)
      .filter(([, n]) => n > MAX_LINES);
    expect(long).toEqual([]);
  });

  // SQL lives in services/core/data, one function per operation. A registry resource declares
  // which rows a path reads by simple conditions on its own table, and the API's reads
  // (services/api/read/) run the query engine's statements; a choice that joins other tables
  // or needs a CTE is a statement of its own, and goes to core/data (path-scopes.ts,
  // changes-of-build.ts, log-reads.ts) where the API calls it.
  it("keeps the registry's resources and the API's reads free of joins and CTEs: those are core/data's", () => {
    const statements = ['services/api/registry/resources', 'services/api/read'].flatMap((folder) =>
      readdirSync(join(ROOT, folder))
        .filter((n) => n.endsWith('.ts'))
        .flatMap((n) =>
          readFileSync(join(ROOT, folder, n), 'utf8')
            .split('\n')
            .map((line, i) => [`${folder}/${n}:${i + 1}`, line.replace(/\/\/.*$/, '')] as const)
            .filter(([, code]) => /\bJOIN\b|\bWITH\s+RECURSIVE\b|\bWITH\s+\w+\s+AS\s*\(/.test(code))
            .map(([at]) => at),
        ),
    );
    expect(statements).toEqual([]);
  });
});

// The scanner the checks above stand on: it must see every way of importing, and nothing that
// only looks like one.
describe('the import scanner', () => {
  it('sees static, type-only, re-exported, side-effect, dynamic and required imports', () => {
    const text = [
      "import a from './a.js';",
      'import {',
      '  b,',
      '  type B,',
      "} from '../b.js';",
      "import type { C } from './c.js';",
      "import * as d from './d.js';",
      "import './e.js';",
      "export { f } from './f.js';",
      "export * as g from './g.js';",
      "export type { H } from './h.js';",
      "const i = await import('./i.js');",
      "type J = typeof import('./j.js');",
      "const k = require('./k.js');",
      "declare module './l.js' {}",
      // A template whose placeholder imports (`${'$'}` writes the placeholder's dollar sign).
      `const m = \`${'$'}{await import("./m.js")}\`;`,
    ].join('\n');
    expect(moduleImports(text)).toEqual([
      './a.js',
      '../b.js',
      './c.js',
      './d.js',
      './e.js',
      './f.js',
      './g.js',
      './h.js',
      './i.js',
      './j.js',
      './k.js',
      './l.js',
      './m.js',
    ]);
  });

  it('takes nothing in comments, strings, templates or regular expressions for an import', () => {
    const text = [
      "// import x from './comment.js';",
      "/* export * from './block.js'; */",
      'const s = "import y from \'./string.js\'";',
      "const t = `import z from './template.js'`;",
      "const r = /import('x')|'/; const q = 'import(\"./after-regex.js\")';",
      'const ratio = 4 / 2; const u = "/";',
      "const meta = import.meta.url; other.import('./method.js'); const from = './not.js';",
      "export const v = 1; export function w() { return './nor.js'; }",
    ].join('\n');
    expect(moduleImports(text)).toEqual([]);
  });
});
