// Artifacts moved to the object store download as they did from PostgreSQL, byte for byte and
// with the same headers (services/api/read/artifacts.ts), in ranges (several ranged GETs for
// one larger than a range); a download during the move (the upload held in the store)
// answers from PostgreSQL; an API without object_store answers a moved artifact with a 503 in
// the contract's shape, before the answer starts, not a 500 or a body cut short.
import { randomBytes } from 'node:crypto';
import type { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { masterConfigSchema } from '../../services/core/config/master-config.js';
import type { ObjectStore } from '../../services/core/objstore/client.js';
import { type MoveArtifactData, moveArtifactProcessor } from '../../services/master/jobs/move-artifact.js';
import { type Harness, openHarness } from '../core/data/harness.js';
import { apiInProcess, type InProcessApi } from '../helpers/api.js';
import { S3Server } from '../helpers/s3-server.js';
import { waitFor } from '../helpers/wait.js';
import { addArtifact, Logs, quiet } from '../master/jobs/helpers.js';

let h: Harness;
let logs: Logs;
let s3: S3Server;
let store: ObjectStore;
let api: InProcessApi;
let storeless: InProcessApi;

const www = masterConfigSchema.shape.www.parse({ page_cache: { enabled: false } });
const MiB = 1024 * 1024;

beforeAll(async () => {
  [h, s3] = await Promise.all([openHarness(), S3Server.start({ bucket: 'artifacts' })]);
  logs = await Logs.open(h);
  store = s3.client();
  [api, storeless] = await Promise.all([
    apiInProcess({ db: { pool: h.db.pool }, www, objectStore: store }),
    apiInProcess({ db: { pool: h.db.pool }, www }),
  ]);
});
afterAll(async () => {
  await Promise.all([api?.stop(), storeless?.stop()]);
  await s3?.close();
  await h?.close();
});

const move = (id: number) =>
  moveArtifactProcessor(
    h.ctx,
    store,
    quiet,
  )({ data: { id }, id: `move-artifact-${id}` } as Job<MoveArtifactData>);

const KEPT_HEADERS = [
  'content-type',
  'content-length',
  'content-disposition',
  'etag',
  'x-content-type-options',
  'content-security-policy',
];

async function download(on: InProcessApi, id: number) {
  const res = await on.app.inject({ method: 'GET', url: `/api/v2/artifacts/${id}/raw` });
  const headers = Object.fromEntries(KEPT_HEADERS.map((k) => [k, res.headers[k]]));
  return {
    status: res.statusCode,
    headers,
    body: res.rawPayload,
    retryAfter: res.headers['retry-after'],
    text: res.body,
  };
}

describe('a moved artifact', () => {
  it('downloads byte for byte as before its move, from ranged GETs', async () => {
    const bytes = randomBytes(2 * MiB + 12_345);
    const id = await addArtifact(h, logs, 'dist/app.tar', bytes);
    const before = await download(api, id);
    expect(before.status).toBe(200);
    expect(before.body.equals(bytes)).toBe(true);
    expect(await move(id)).toBe('moved');
    const after = await download(api, id);
    expect(after.status).toBe(200);
    expect(after.headers).toEqual(before.headers);
    expect(after.headers['x-content-type-options']).toBe('nosniff');
    expect(after.body.equals(bytes)).toBe(true);
    // A range (1 MiB) at a time: three GETs, none of the whole object.
    const gets = s3.requests.filter((r) => r.method === 'GET' && r.key.startsWith(`artifacts/${id}/`));
    expect(gets).toHaveLength(3);
    expect(s3.refused).toEqual([]);
  });

  it('downloads from PostgreSQL during the move, and from the store after it', async () => {
    const bytes = randomBytes(100_000);
    const id = await addArtifact(h, logs, 'dist/during.bin', bytes);
    const release = s3.hold();
    try {
      const moving = move(id);
      await waitFor('the upload to be held', () => s3.putsWaiting === 1);
      const during = await download(api, id);
      expect(during.status).toBe(200);
      expect(during.body.equals(bytes)).toBe(true);
      release();
      expect(await moving).toBe('moved');
      expect((await download(api, id)).body.equals(bytes)).toBe(true);
    } finally {
      release();
    }
  });

  it('is a 503 OBJECT_STORE_UNAVAILABLE on an API without object_store', async () => {
    const id = await addArtifact(h, logs, 'dist/away.bin', randomBytes(1000));
    expect(await move(id)).toBe('moved');
    const res = await download(storeless, id);
    expect(res.status).toBe(503);
    expect(res.retryAfter).toBeDefined();
    expect(res.text).toContain('object_store');
  });
});
