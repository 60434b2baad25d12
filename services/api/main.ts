// The API process: `npm run api`, or the container's `api` command.
import { loadApiEnv, redact } from '../core/config/env.js';
import { createPool } from '../core/db/pool.js';
import { onShutdown } from '../core/lifecycle.js';
import { createRedis } from '../core/redis.js';
import { createLogger } from '../core/telemetry/logger.js';
import { startTelemetry } from '../core/telemetry/tracing.js';
import { buildApp } from './http/server.js';

const env = loadApiEnv();
const telemetry = startTelemetry('flotilla-api');
const log = createLogger('api', env.logLevel);
const db = createPool(env.databaseUrl, { applicationName: 'flotilla-api' });
const redis = createRedis(env.redisUrl, 'flotilla-api');
redis.on('error', (err) => log.warn({ err: err.message }, 'redis error'));

const app = await buildApp({ db, redis, log, publicUrl: env.publicUrl });
await app.listen({ port: env.port, host: env.host });
log.info({ url: env.publicUrl, database: redact(env.databaseUrl) }, 'api listening');

onShutdown(log, () => [
  { name: 'http', run: () => app.close() },
  { name: 'postgres', run: () => db.dispose() },
  { name: 'redis', run: () => redis.quit() },
  { name: 'telemetry', run: () => telemetry.shutdown() },
]);
