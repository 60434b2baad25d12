// Review issue 13, finding 8 (low): the raw log cache shared a folder under /tmp and deleted
// folders it believed dead; each process has a private 0700 folder and removes only its own.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawLogCache } from '../../services/api/read/raw-log-cache.js';

describe("the raw log cache's folders", () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'flotilla-raw-root-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('each process gets a private 0700 folder, and removes only its own', async () => {
    // What another process (dead or alive, another user or not) left there.
    const theirs = join(root, `raw-${process.pid}-theirs`);
    mkdirSync(theirs);
    const a = await RawLogCache.open(root, 1024 * 1024);
    const b = await RawLogCache.open(root, 1024 * 1024);
    const mine = readdirSync(root).filter((n) => join(root, n) !== theirs);
    expect(mine).toHaveLength(2);
    for (const n of mine) expect(statSync(join(root, n)).mode & 0o777).toBe(0o700);
    await a.close();
    await b.close();
    expect(readdirSync(root)).toEqual([`raw-${process.pid}-theirs`]);
  });

  it('a root that is a link to somewhere else is not used', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'flotilla-elsewhere-'));
    const link = join(root, 'link');
    try {
      symlinkSync(elsewhere, link);
      await expect(RawLogCache.open(link, 1024)).rejects.toThrow(/not a directory/);
      expect(readdirSync(elsewhere)).toEqual([]);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
