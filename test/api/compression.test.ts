// Compressed answers (Buildbot 4.3 compresses what it serves; services/api/reply/compress.ts):
// a large page goes out as the best encoding the client accepts, decodes to exactly the
// identity body, says its length and encoding, and has an ETag of its own that answers 304;
// a client that accepts none, or refuses one with q=0, gets the body as it is; a small page
// is never compressed.
import * as zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENCODINGS, MIN_BYTES, pickEncoding } from '../../services/api/reply/compress.js';
import { sql } from '../../services/core/db/pool.js';
import { DECODE } from '../helpers/decode.js';
import { ApiUnderTest, JSON_ACCEPT } from './lib/harness.js';

// Large enough to be compressed: every build of the fixture.
const BIG = '/builds?order=buildid';
const SMALL = '/builds/1?field=buildid';

let api: ApiUnderTest;
let identity: Buffer;
beforeAll(async () => {
  api = await ApiUnderTest.start('fixture');
  identity = (await api.get(BIG, JSON_ACCEPT)).raw;
});
afterAll(async () => {
  await api?.close();
});

describe('Accept-Encoding', () => {
  it('names what this Node can write: zstd where it has it, then brotli, then gzip', () => {
    expect(ENCODINGS.slice(-2)).toEqual(['br', 'gzip']);
    expect(ENCODINGS.includes('zstd')).toBe(
      typeof (zlib as { zstdCompress?: unknown }).zstdCompress === 'function',
    );
    expect(pickEncoding('gzip, br')).toBe('br');
    expect(pickEncoding('gzip;q=0.5, br;q=0')).toBe('gzip');
    expect(pickEncoding('*;q=0')).toBeNull();
    expect(pickEncoding('identity')).toBeNull();
    expect(pickEncoding(undefined)).toBeNull();
  });

  it('identity: the body as it is, its length said', async () => {
    const a = await api.get(BIG, JSON_ACCEPT);
    expect(a.headers['content-encoding']).toBeUndefined();
    expect(Number(a.headers['content-length'])).toBe(a.raw.length);
    expect(a.raw.length).toBeGreaterThan(MIN_BYTES);
  });

  for (const enc of ENCODINGS) {
    it(`${enc}: decodes to the identity body; its own ETag answers 304`, async () => {
      const a = await api.get(BIG, { ...JSON_ACCEPT, 'accept-encoding': enc });
      expect(a.status).toBe(200);
      expect(a.headers['content-encoding']).toBe(enc);
      expect(String(a.headers.vary)).toContain('Accept-Encoding');
      expect(Number(a.headers['content-length'])).toBe(a.raw.length);
      expect(a.raw.length).toBeLessThan(identity.length / 3);
      expect((await DECODE[enc]!(a.raw)).equals(identity)).toBe(true);
      const etag = String(a.headers.etag);
      expect(etag).toMatch(new RegExp(`-${enc}"$`));
      const again = await api.get(BIG, { ...JSON_ACCEPT, 'accept-encoding': enc, 'if-none-match': etag });
      expect(again.status).toBe(304);
      // The identity's validator is another representation's: no 304 for it.
      const plain = await api.get(BIG, { ...JSON_ACCEPT, 'if-none-match': etag });
      expect(plain.status).toBe(200);
    });
  }

  it('HEAD says the length of the encoded body', async () => {
    const get = await api.get(BIG, { ...JSON_ACCEPT, 'accept-encoding': 'gzip' });
    const head = await api.request('HEAD', BIG, { headers: { ...JSON_ACCEPT, 'accept-encoding': 'gzip' } });
    expect(head.headers['content-encoding']).toBe('gzip');
    expect(Number(head.headers['content-length'])).toBe(get.raw.length);
    expect(head.raw.length).toBe(0);
  });

  it('a refused or unknown encoding, and a small page, go out as they are', async () => {
    for (const ae of ['gzip;q=0', 'compress', '']) {
      const a = await api.get(BIG, { ...JSON_ACCEPT, 'accept-encoding': ae });
      expect(a.headers['content-encoding'], ae).toBeUndefined();
      expect(a.raw.equals(identity)).toBe(true);
    }
    const small = await api.get(SMALL, { ...JSON_ACCEPT, 'accept-encoding': 'gzip, br, zstd' });
    expect(small.status).toBe(200);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.raw.length).toBeLessThan(MIN_BYTES);
  });
});

describe('build data values', () => {
  it('a large value goes out compressed as the client accepts, decoding to its bytes; a small one as it is', async () => {
    const value = Buffer.from('build data line\n'.repeat(500));
    await api.db.pool.query(sql`INSERT INTO build_data (buildid, name, value, length, source)
      VALUES (1, 'big_value', ${value}, ${value.length}, 'test')`);
    const path = '/builds/1/data/big_value/value';
    const plain = await api.get(path, {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.raw.equals(value)).toBe(true);
    for (const enc of ENCODINGS) {
      const a = await api.get(path, { 'accept-encoding': enc });
      expect([a.status, a.headers['content-encoding']]).toEqual([200, enc]);
      expect(String(a.headers.vary)).toContain('Accept-Encoding');
      expect(Number(a.headers['content-length'])).toBe(a.raw.length);
      expect((await DECODE[enc]!(a.raw)).equals(value), enc).toBe(true);
      const etag = String(a.headers.etag);
      expect(etag).toMatch(new RegExp(`-${enc}"$`));
      expect((await api.get(path, { 'accept-encoding': enc, 'if-none-match': etag })).status).toBe(304);
    }
    const [small] = await api.db.pool.query(sql`SELECT buildid, name FROM build_data
      WHERE length < ${MIN_BYTES} AND name ~ '^[a-zA-Z_-][.a-zA-Z0-9_-]*$' ORDER BY id LIMIT 1`);
    const s = await api.get(`/builds/${small.buildid}/data/${small.name}/value`, {
      'accept-encoding': 'gzip',
    });
    expect([s.status, s.headers['content-encoding']]).toEqual([200, undefined]);
  });
});
