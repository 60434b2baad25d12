// The object-store benchmark's API: buildApp as services/api/service.ts builds it, with the
// object store and with nothing kept between reads (no page cache, no raw log cache), so that
// every answer is read from PostgreSQL or the store. Prints its origin, serves until killed.
// OBJECT_SPANS_BYTES sizes the spans of moved logs it keeps (read/object-spans.ts): 0 for the
// first-read mode, where no range is ever served from memory.

import { buildApp } from '../../../services/api/http/server.js';
import { masterConfigSchema } from '../../../services/core/config/master-config.js';
import { createPool } from '../../../services/core/db/pool.js';
import { ObjectStore } from '../../../services/core/objstore/client.js';
import { createRedis } from '../../../services/core/redis.js';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import { TEST_S3_CREDENTIALS } from '../../../test/helpers/s3-server.js';

const databaseUrl = process.env.DATABASE_URL!;
const app = await buildApp({
  db: createPool(databaseUrl),
  redis: createRedis(process.env.REDIS_URL!, 'bench-api'),
  log: createLogger('bench-api', 'warn'),
  publicUrl: 'http://127.0.0.1/',
  databaseUrl,
  www: masterConfigSchema.shape.www.parse({
    page_cache: { enabled: false },
    raw_log_cache: { enabled: false },
    rate_limit: { enabled: false },
  }),
  ...(process.env.OBJECT_SPANS_BYTES ? { objectSpansBytes: Number(process.env.OBJECT_SPANS_BYTES) } : {}),
  objectStore: new ObjectStore({
    endpoint: process.env.S3_ENDPOINT!,
    bucket: process.env.S3_BUCKET ?? 'bench',
    region: 'us-east-1',
    prefix: '',
    pathStyle: true,
    credentials: TEST_S3_CREDENTIALS,
  }),
});
const origin = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${origin}\n`);
// A clean exit on SIGTERM, so that a CPU profile (run.ts's PROFILE) is written.
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
