// File transfers between a master and a Flotilla agent over the real protocol, with
// buildbot-worker's semantics: a file up in blocks (each stored before the next), a missing
// file, maxsize truncation, a directory as a tar archive, a file down with its mode, and
// nothing outside the worker's directory.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlotillaConnection } from '../../services/master/workers/flotilla/connection.js';
import { collector, reader } from '../helpers/transfer-ends.js';
import { connectAgent, type Pair } from './pair.js';

const dir = mkdtempSync(join(tmpdir(), 'flotilla-transfer-'));
let pair: Pair;
let w: FlotillaConnection;

beforeAll(async () => {
  pair = await connectAgent(dir);
  w = pair.conn;
});
afterAll(async () => {
  await pair?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('upload', () => {
  it('sends a file in blocks, each written before the next', async () => {
    mkdirSync(join(dir, 'b', 'build'), { recursive: true });
    const data = randomBytes(3 * 1024 * 1024 + 17);
    writeFileSync(join(dir, 'b', 'build', 'out.bin'), data);
    const c = collector();
    const end = await w.upload({ path: 'b/build/out.bin', blocksize: 64 * 1024 }, c.write);
    expect(end).toEqual({ rc: 0, text: '' });
    expect(c.bytes().equals(data)).toBe(true);
    expect(c.count()).toBe(Math.ceil(data.length / (64 * 1024)));
    expect(c.overlapped()).toBe(false);
  });

  it('a missing file ends rc 1, as buildbot-worker says it', async () => {
    const end = await w.upload({ path: 'b/build/nothing' }, collector().write);
    expect(end).toMatchObject({
      rc: 1,
      text: expect.stringMatching(/^Cannot open file '.*nothing' for upload/),
    });
  });

  it('past maxsize, what fits is sent and the transfer ends rc 1', async () => {
    writeFileSync(join(dir, 'b', 'build', 'big.txt'), 'x'.repeat(5000));
    const c = collector();
    const end = await w.upload({ path: 'b/build/big.txt', maxsize: 1000, blocksize: 300 }, c.write);
    expect(end).toMatchObject({
      rc: 1,
      text: expect.stringMatching(/^Maximum filesize reached, truncating file/),
    });
    expect(c.bytes().toString()).toBe('x'.repeat(1000));
  });

  it('a directory comes as a tar archive', async () => {
    mkdirSync(join(dir, 'b', 'build', 'dist', 'sub'), { recursive: true });
    writeFileSync(join(dir, 'b', 'build', 'dist', 'a.txt'), 'a');
    writeFileSync(join(dir, 'b', 'build', 'dist', 'sub', 'b.txt'), 'b');
    for (const compress of [null, 'gz'] as const) {
      const c = collector();
      expect(await w.uploadDirectory({ path: 'b/build/dist', compress }, c.write)).toEqual({
        rc: 0,
        text: '',
      });
      const listing = execFileSync('tar', ['-t', ...(compress ? ['-z'] : []), '-f', '-'], {
        input: c.bytes(),
      })
        .toString()
        .split('\n')
        .filter((l) => l.endsWith('.txt'))
        .sort();
      expect(listing).toEqual(['./a.txt', './sub/b.txt']);
    }
  });

  it('nothing outside the worker directory', async () => {
    const end = await w.upload({ path: '../../../etc/passwd' }, collector().write);
    expect(end).toMatchObject({ rc: 1, text: expect.stringMatching(/outside the worker's directory/) });
  });
});

describe('download', () => {
  it('writes a file in blocks, making its directories, with its mode', async () => {
    const data = randomBytes(2 * 1024 * 1024 + 5);
    const end = await w.download(
      { path: 'b/build/new/dir/in.bin', blocksize: 100_000, mode: 0o750 },
      reader(data),
    );
    expect(end).toEqual({ rc: 0, text: '' });
    const path = join(dir, 'b', 'build', 'new', 'dir', 'in.bin');
    expect(readFileSync(path).equals(data)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o750);
  });

  it('past maxsize, truncated, rc 1', async () => {
    const end = await w.download(
      { path: 'b/build/small.txt', maxsize: 10, blocksize: 4 },
      reader(Buffer.from('0123456789abcdef')),
    );
    expect(end).toMatchObject({ rc: 1, text: expect.stringMatching(/^Maximum filesize reached/) });
    expect(readFileSync(join(dir, 'b', 'build', 'small.txt'), 'utf8')).toBe('0123456789');
  });
});
