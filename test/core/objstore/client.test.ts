// The S3 client against the tests' S3 server, which checks every signature: objects go in,
// come back whole or by byte range, and go; a wrong secret, a wrong region or an unreachable
// store is an OBJECT_STORE_UNAVAILABLE error that names the store's answer, a missing object a
// NotFoundError.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError, UnavailableError } from '../../../services/core/errors.js';
import { ObjectStore, type ObjectStoreSettings } from '../../../services/core/objstore/client.js';
import { S3Server, TEST_S3_CREDENTIALS } from '../../helpers/s3-server.js';

let s3: S3Server;
let settings: ObjectStoreSettings;
beforeAll(async () => {
  s3 = await S3Server.start({ bucket: 'flotilla-test', region: 'eu-test-1' });
  settings = {
    endpoint: s3.endpoint,
    bucket: 'flotilla-test',
    region: 'eu-test-1',
    prefix: 'p/',
    pathStyle: true,
    credentials: TEST_S3_CREDENTIALS,
  };
});
afterAll(() => s3?.close());

describe('ObjectStore', () => {
  it('puts, reads whole and by range, and deletes, every request signed', async () => {
    const store = new ObjectStore(settings);
    const key = store.key('logs/1 a+b.chunks');
    const body = Buffer.from('0123456789abcdefghij');
    await store.put(key, body);
    expect(s3.objects.get('p/logs/1 a+b.chunks')?.toString()).toBe(body.toString());
    expect(Buffer.from(await store.get(key)).toString()).toBe(body.toString());
    expect(Buffer.from(await store.get(key, { start: 3, end: 7 })).toString()).toBe('34567');
    expect(s3.requests.at(-1)).toEqual({ method: 'GET', key: 'p/logs/1 a+b.chunks', range: 'bytes=3-7' });
    await store.delete(key);
    await store.delete(key);
    await expect(store.get(key)).rejects.toBeInstanceOf(NotFoundError);
    expect(s3.refused).toEqual([]);
  });

  it('is refused with a wrong secret or region, with the store error code in the message', async () => {
    const wrongSecret = new ObjectStore({
      ...settings,
      credentials: { ...TEST_S3_CREDENTIALS, secretAccessKey: 'wrong' },
    });
    const err = await wrongSecret.put('k', Buffer.from('x')).catch((e) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err.code).toBe('OBJECT_STORE_UNAVAILABLE');
    expect(err.message).toContain('403 SignatureDoesNotMatch');
    expect(err.message).not.toContain('wrong');
    const wrongRegion = new ObjectStore({ ...settings, region: 'us-east-1' });
    await expect(wrongRegion.get('k')).rejects.toThrow(/403 AuthorizationHeaderMalformed/);
    expect(s3.objects.has('k')).toBe(false);
  });

  it('reports a store that does not answer as unavailable', async () => {
    const away = new ObjectStore({ ...settings, endpoint: 'http://127.0.0.1:1', timeoutMs: 2000 });
    await expect(away.get('k')).rejects.toMatchObject({ code: 'OBJECT_STORE_UNAVAILABLE' });
  });
});
