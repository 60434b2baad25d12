// The master process: `npm run master`, or the container's `master` command.
import { loadMasterEnv, redact } from '../core/config/env.js';
import { ConfigError } from '../core/config/errors.js';
import { loadMasterConfig } from '../core/config/master-config.js';
import { createPool } from '../core/db/pool.js';
import { postgresCheck, redisCheck } from '../core/health.js';
import { startProbeServer } from '../core/http/probe-server.js';
import { onShutdown } from '../core/lifecycle.js';
import { createRedis } from '../core/redis.js';
import { createLogger } from '../core/telemetry/logger.js';
import { startTelemetry } from '../core/telemetry/tracing.js';
import { startWorkerServer } from './workers/server.js';

const env = loadMasterEnv();
const log = createLogger('master', env.logLevel);
let config: ReturnType<typeof loadMasterConfig>;
try {
  config = loadMasterConfig(env.configPath);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  log.fatal({ code: err.code, problems: err.problems }, err.message);
  process.exit(2);
}
const telemetry = startTelemetry('flotilla-master');
const db = createPool(env.databaseUrl, { applicationName: `flotilla-master ${env.masterName}` });
const redis = createRedis(env.redisUrl, 'flotilla-master');
redis.on('error', (err) => log.warn({ err: err.message }, 'redis error'));

const workers = await startWorkerServer({
  host: env.host,
  port: env.workerPort,
  config,
  masterName: env.masterName,
  log,
});
const probes = await startProbeServer({
  host: env.host,
  port: env.probePort,
  checks: [postgresCheck(db), redisCheck(redis)],
});
log.info(
  {
    master: env.masterName,
    builders: config.builders.length,
    workerPort: workers.port,
    probePort: probes.port,
    database: redact(env.databaseUrl),
  },
  'master started',
);

onShutdown(log, () => [
  { name: 'workers', run: () => workers.close() },
  { name: 'probes', run: () => probes.close() },
  { name: 'postgres', run: () => db.dispose() },
  { name: 'redis', run: () => redis.quit() },
  { name: 'telemetry', run: () => telemetry.shutdown() },
]);
