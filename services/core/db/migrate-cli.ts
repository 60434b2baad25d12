// `npm run migrate`: apply the migrations to DATABASE_URL. The Helm chart's migration job
// runs this same command.
import { redact } from '../config/env.js';
import { createLogger } from '../telemetry/logger.js';
import { migrate } from './migrate.js';
import { createPool } from './pool.js';

const url = process.env.DATABASE_URL;
const log = createLogger('migrate', (process.env.LOG_LEVEL as 'info') ?? 'info');
if (!url) {
  log.fatal('DATABASE_URL is not set');
  process.exit(2);
}
const pool = createPool(url, { poolSize: 1, applicationName: 'flotilla-migrate' });
try {
  const res = await migrate(pool, (msg, fields) => log.info(fields ?? {}, msg));
  log.info({ applied: res.applied, adopted: res.adopted, database: redact(url) }, 'database is up to date');
} catch (err) {
  log.fatal({ code: (err as { code?: string }).code }, (err as Error).message);
  process.exitCode = 1;
} finally {
  await pool.dispose();
}
