// A clone alone runs `npm start` and `npm test` (issue 29 §1): nothing in the repository may
// reach for a folder beside it or a path of one development machine. The recorded Buildbot
// data the tests need is test data here (test/fixtures/buildbot-3.7/); this fails on any file
// that names the project's reference folder by its relative or absolute path, or by the
// variable that once pointed at it. CI also runs the suite with that folder hidden (.ci/run).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

// Written in pieces, so that this file does not name what it looks for.
const OUTSIDE = [
  ['..', 'shared'].join('/'),
  ['', 'work', 'shared'].join('/'),
  ['FLOTILLA', 'SHARED'].join('_'),
];

// Released migrations are never edited (their checksum is checked at every start:
// services/core/db/migrate.ts); 0001's header names where its DDL was first taken from,
// which is test/fixtures/buildbot-3.7/schema.sql now.
const FROZEN = new Set(['services/core/db/migrations/0001_buildbot_3_7_schema.sql']);

const SKIP = new Set(['node_modules', '.git', '.data']);

function files(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files(path, out);
    else out.push(path);
  }
  return out;
}

/** `file:line: text` for each line naming a path outside the repository. */
function outsideReferences(paths: string[]): string[] {
  const found: string[] = [];
  for (const path of paths) {
    const text = readFileSync(path);
    if (text.includes(0)) continue; // images and other binary files
    text
      .toString('utf8')
      .split('\n')
      .forEach((line, i) => {
        if (OUTSIDE.some((o) => line.includes(o)))
          found.push(`${relative(ROOT, path)}:${i + 1}: ${line.trim()}`);
      });
  }
  return found;
}

describe('the repository stands alone', () => {
  it('has no file that names a folder outside it, but the frozen migration', () => {
    const all = files(ROOT);
    // The folders the issue names, and the configuration at the root, are all read.
    for (const d of ['test', 'deploy', '.ci', 'services', 'load', 'docs', 'charts'])
      expect(
        all.some((f) => relative(ROOT, f).startsWith(`${d}/`)),
        d,
      ).toBe(true);
    for (const f of ['package.json', 'README.md', 'vitest.config.ts']) expect(all).toContain(join(ROOT, f));
    const found = outsideReferences(all.filter((f) => !FROZEN.has(relative(ROOT, f))));
    expect(found).toEqual([]);
  });

  it('finds such a name when a file has one (the check itself)', () => {
    expect(outsideReferences([join(ROOT, [...FROZEN][0]!)])).toHaveLength(1);
  });

  it('keeps the recorded data the tests read in the repository', () => {
    for (const f of ['schema.sql', 'fixture.sql', 'cases.json', 'README.md'])
      expect(statSync(join(ROOT, 'test/fixtures/buildbot-3.7', f)).size, f).toBeGreaterThan(1000);
  });
});
