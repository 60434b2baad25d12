// object_store: an S3-compatible store (AWS S3, MinIO, Ceph RGW, GCS's XML API...) that
// finished logs and artifacts move to (docs/object-store.md). Not set, everything stays in
// PostgreSQL, as before this section existed. The key pair is named by where it lives, never
// by value: each from an environment variable or a file (a mounted Secret), read once at start.
import { z } from 'zod';
import { credentialUrl } from './urls.js';

const exactlyOne = (o: Record<string, unknown>, a: string, b: string) =>
  (o[a] === undefined) !== (o[b] === undefined);

export const objectStore = z
  .object({
    // The store's address: https, or http on the loopback interface (a local MinIO).
    endpoint: credentialUrl(),
    bucket: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'expected an S3 bucket name (3-63 of a-z 0-9 . -)'),
    // What the signature is scoped to (MinIO's default is us-east-1).
    region: z.string().min(1).default('us-east-1'),
    // Put before every key Flotilla writes (`flotilla/`), to share a bucket.
    prefix: z
      .string()
      .regex(/^([A-Za-z0-9._-]+\/)*$/, 'expected folder names each ending with "/", or nothing')
      .default(''),
    // `endpoint/bucket/key` (MinIO and most S3-compatible servers); false: `bucket.endpoint/key`.
    path_style: z.boolean().default(true),
    access_key_id_env: z.string().min(1).optional(),
    access_key_id_file: z.string().min(1).optional(),
    secret_access_key_env: z.string().min(1).optional(),
    secret_access_key_file: z.string().min(1).optional(),
  })
  .strict()
  .refine((o) => exactlyOne(o, 'access_key_id_env', 'access_key_id_file'), {
    message: 'expected exactly one of access_key_id_env, access_key_id_file',
  })
  .refine((o) => exactlyOne(o, 'secret_access_key_env', 'secret_access_key_file'), {
    message: 'expected exactly one of secret_access_key_env, secret_access_key_file',
  });

export type ObjectStoreConfig = z.infer<typeof objectStore>;
