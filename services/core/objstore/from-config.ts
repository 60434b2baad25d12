// The object store a configuration's object_store section names, its key pair read from
// where the section says (an environment variable or a file); null without the section.
// An unset or unreadable credential is a ConfigError: the process does not start.
import type { ObjectStoreConfig } from '../config/master-config.js';
import { readSecret } from '../config/secret-source.js';
import { ObjectStore } from './client.js';

export function objectStoreOf(
  config: ObjectStoreConfig | undefined,
  env: Record<string, string | undefined> = process.env,
): ObjectStore | null {
  if (!config) return null;
  const read = (name: 'access_key_id' | 'secret_access_key') =>
    readSecret(
      `object_store.${name}`,
      { fromEnv: config[`${name}_env`], fromFile: config[`${name}_file`] },
      env,
    )!;
  return new ObjectStore({
    endpoint: config.endpoint,
    bucket: config.bucket,
    region: config.region,
    prefix: config.prefix,
    pathStyle: config.path_style,
    credentials: { accessKeyId: read('access_key_id'), secretAccessKey: read('secret_access_key') },
  });
}
