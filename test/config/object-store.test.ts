// object_store in the master configuration: taken with its defaults, refused with a clear
// message for a plain-http endpoint elsewhere than the loopback, a bad bucket name or a key
// pair named twice or not at all; the key pair is read from the environment or a file, and
// one that is unset is a configuration error, not a store that fails later.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import { objectStoreOf } from '../../services/core/objstore/from-config.js';

const section = (o: Record<string, unknown>) =>
  parseMasterConfig(
    stringify({
      object_store: {
        endpoint: 'https://s3.example.org',
        bucket: 'ci-logs',
        access_key_id_env: 'AK',
        secret_access_key_env: 'SK',
        ...o,
      },
    }),
  );

describe('object_store', () => {
  it('is absent by default: everything stays in PostgreSQL', () => {
    expect(parseMasterConfig('{}').object_store).toBeUndefined();
    expect(objectStoreOf(undefined)).toBeNull();
  });

  it('takes defaults for region, prefix and path style', () => {
    expect(section({}).object_store).toMatchObject({ region: 'us-east-1', prefix: '', path_style: true });
  });

  it.each([
    [{ endpoint: 'http://s3.example.org' }, /object_store.endpoint: expected an https URL/],
    [{ bucket: 'No_Such' }, /object_store.bucket: expected an S3 bucket name/],
    [{ prefix: 'ci' }, /object_store.prefix: expected folder names/],
    [{ access_key_id_file: '/k' }, /exactly one of access_key_id_env, access_key_id_file/],
    [{ secret_access_key_env: undefined }, /exactly one of secret_access_key_env, secret_access_key_file/],
  ])('refuses %j', (o, message) => {
    expect(() => section(o)).toThrow(
      expect.objectContaining({ problems: expect.arrayContaining([expect.stringMatching(message)]) }),
    );
  });

  it('reads the key pair from the environment and a file; an unset one is a configuration error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'objstore-'));
    writeFileSync(join(dir, 'sk'), 'secret-from-file\n');
    const cfg = section({
      secret_access_key_env: undefined,
      secret_access_key_file: join(dir, 'sk'),
    }).object_store;
    expect(objectStoreOf(cfg, { AK: 'key-id' })).not.toBeNull();
    expect(() => objectStoreOf(cfg, {})).toThrow(
      /object_store.access_key_id: environment variable AK is not set/,
    );
  });
});
