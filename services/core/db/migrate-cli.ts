// `npm run migrate`: apply the migrations to DATABASE_URL. The Helm chart's migration job
// runs this same command. `npm run migrate -- --to-buildbot-4` then records Buildbot 4.3's
// alembic revision, as `buildbot upgrade-master` would (migrate.ts, recordBuildbot4).
import { redact } from '../config/env.js';
import { createLogger } from '../telemetry/logger.js';
import { migrate, recordBuildbot4 } from './migrate.js';
import { createPool } from './pool.js';

const url = process.env.DATABASE_URL;
const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== '--to-buildbot-4');
const log = createLogger('migrate', (process.env.LOG_LEVEL as 'info') ?? 'info');
if (!url) {
  log.fatal('DATABASE_URL is not set');
  process.exit(2);
}
if (unknown.length > 0) {
  log.fatal({ args: unknown }, 'unknown argument; the only one is --to-buildbot-4');
  process.exit(2);
}
const pool = createPool(url, { poolSize: 1, applicationName: 'flotilla-migrate' });
try {
  const res = await migrate(pool, (msg, fields) => log.info(fields ?? {}, msg));
  log.info({ applied: res.applied, adopted: res.adopted, database: redact(url) }, 'database is up to date');
  if (args.includes('--to-buildbot-4')) {
    const before = await recordBuildbot4(pool);
    log.info({ before, database: redact(url) }, 'alembic_version now names Buildbot 4.3 (067)');
  }
} catch (err) {
  log.fatal({ code: (err as { code?: string }).code }, (err as Error).message);
  process.exitCode = 1;
} finally {
  await pool.dispose();
}
