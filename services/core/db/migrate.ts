// Schema migrations: numbered .sql files in ./migrations, applied in order under an
// advisory lock, so that several pods starting at once apply each migration exactly once.
//
// The public schema is Buildbot 3.7's, byte for byte (0001), with Buildbot 4.3's additions
// (0021). A database that a real Buildbot created is adopted: the migrations that make
// Buildbot's own schema up to its alembic revision (0001 for 3.7's 059, 0001 and 0021 for
// 4.3's 067) are recorded as applied without running, and only the others run. Our
// bookkeeping lives in the separate `flotilla` schema so that `public` stays what Buildbot
// expects.
//
// A file whose first line is `-- flotilla:concurrent` runs outside a transaction, one
// statement at a time, so that CREATE INDEX CONCURRENTLY does not block writers on a
// large existing database. Such statements must be idempotent (IF NOT EXISTS).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../telemetry/logger.js';
import { isDatabaseOutage } from './outage.js';
import { type ConnectionPool, type Queryable, sql } from './pool.js';

export const BUILDBOT_ALEMBIC_REVISION = '059';
/** Buildbot 4.3's last alembic revision (067_v4.3_add_codebase_data). */
export const BUILDBOT_4_ALEMBIC_REVISION = '067';
const BASE_SCHEMA = '0001_buildbot_3_7_schema';
const BUILDBOT_4_SCHEMA = '0021_buildbot_4_3_schema';
/** The alembic revisions Flotilla adopts, each with the migrations of Buildbot's own schema it holds. */
const ADOPTABLE: ReadonlyMap<string, readonly string[]> = new Map([
  [BUILDBOT_ALEMBIC_REVISION, [BASE_SCHEMA]],
  [BUILDBOT_4_ALEMBIC_REVISION, [BASE_SCHEMA, BUILDBOT_4_SCHEMA]],
]);
// An arbitrary constant: every Flotilla process that migrates takes the same lock.
const LOCK_KEY = 0x666c6f74; // "flot"

export interface Migration {
  id: string;
  text: string;
  checksum: string;
  concurrent: boolean;
}

export class MigrationError extends Error {
  override name = 'MigrationError';
  constructor(
    readonly code:
      | 'MIGRATION_FOREIGN_SCHEMA'
      | 'MIGRATION_CHANGED'
      | 'MIGRATION_FAILED'
      | 'MIGRATION_PENDING',
    message: string,
  ) {
    super(message);
  }
}

export interface MigrateResult {
  applied: string[];
  adopted: boolean;
}

export function loadMigrations(
  dir = join(dirname(fileURLToPath(import.meta.url)), 'migrations'),
): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => {
      const text = readFileSync(join(dir, f), 'utf8');
      return {
        id: f.replace(/\.sql$/, ''),
        text,
        checksum: createHash('sha256').update(text).digest('hex'),
        concurrent: text.startsWith('-- flotilla:concurrent'),
      };
    });
}

/** The statements of a concurrent migration: split on semicolons that end a line. */
function statements(text: string): string[] {
  return text
    .split(/;\s*$/m)
    .map((s) =>
      s
        .split('\n')
        .filter((l) => !l.trim().startsWith('--'))
        .join('\n')
        .trim(),
    )
    .filter(Boolean);
}

async function publicTables(db: Queryable): Promise<Set<string>> {
  const rows = await db.query(
    sql`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
  );
  return new Set(rows.map((r) => r.table_name as string));
}

export async function migrate(
  pool: ConnectionPool,
  log: (msg: string, fields?: object) => void = () => {},
  migrations: Migration[] = loadMigrations(),
): Promise<MigrateResult> {
  return pool.task(async (conn) => {
    await takeLock(conn);
    try {
      await conn.query(sql`CREATE SCHEMA IF NOT EXISTS flotilla`);
      await conn.query(sql`
        CREATE TABLE IF NOT EXISTS flotilla.migrations (
          id text PRIMARY KEY,
          checksum text NOT NULL,
          applied_at timestamptz NOT NULL DEFAULT now(),
          adopted boolean NOT NULL DEFAULT false
        )`);
      const done = new Map<string, string>(
        (await conn.query(sql`SELECT id, checksum FROM flotilla.migrations`)).map((r) => [r.id, r.checksum]),
      );

      let adopted = false;
      const tables = await publicTables(conn);
      if (!done.has(BASE_SCHEMA) && tables.size > 0 && !tables.has('alembic_version')) {
        throw new MigrationError(
          'MIGRATION_FOREIGN_SCHEMA',
          `the public schema holds ${tables.size} tables but no alembic_version: not a Buildbot database; refusing to touch it`,
        );
      }
      if (tables.has('alembic_version')) {
        // A Buildbot database, or one our migrations made: what Buildbot's revision already
        // holds is adopted (a 3.7 database upgraded by Buildbot 4.3 after we adopted it too).
        const rev = (await conn.query(sql`SELECT version_num FROM public.alembic_version`)).map(
          (r) => r.version_num as string,
        );
        const holds = rev.length === 1 ? ADOPTABLE.get(rev[0]!) : undefined;
        if (!holds) {
          throw new MigrationError(
            'MIGRATION_FOREIGN_SCHEMA',
            `this is a Buildbot database at revision ${rev.join(',') || '(none)'}; Flotilla needs revision ${BUILDBOT_ALEMBIC_REVISION} (Buildbot 3.7) or ${BUILDBOT_4_ALEMBIC_REVISION} (Buildbot 4.3); upgrade it with Buildbot first`,
          );
        }
        for (const id of holds.filter((h) => !done.has(h))) {
          const m = migrations.find((x) => x.id === id)!;
          await conn.query(
            sql`INSERT INTO flotilla.migrations (id, checksum, adopted) VALUES (${id}, ${m.checksum}, true)`,
          );
          done.set(id, m.checksum);
          adopted = true;
        }
        if (adopted) {
          const version = rev[0] === BUILDBOT_ALEMBIC_REVISION ? '3.7' : '4.3';
          log(`adopted an existing Buildbot ${version} database; only Flotilla migrations will run`);
        }
      }

      const applied: string[] = [];
      for (const m of migrations) {
        const seen = done.get(m.id);
        if (seen !== undefined) {
          if (seen !== m.checksum) {
            throw new MigrationError(
              'MIGRATION_CHANGED',
              `migration ${m.id} was applied with different contents; never edit an applied migration, add a new one`,
            );
          }
          continue;
        }
        log('applying migration', { migration: m.id });
        try {
          if (m.concurrent) {
            await dropInvalidIndexes(conn);
            for (const s of statements(m.text)) await conn.query(sql.__dangerous__rawValue(s));
            await conn.query(
              sql`INSERT INTO flotilla.migrations (id, checksum) VALUES (${m.id}, ${m.checksum})`,
            );
          } else {
            await conn.tx(async (tx) => {
              // Migration files are static text shipped with the code, never built from input.
              await tx.query(sql.__dangerous__rawValue(m.text));
              await tx.query(
                sql`INSERT INTO flotilla.migrations (id, checksum) VALUES (${m.id}, ${m.checksum})`,
              );
            });
          }
        } catch (err) {
          throw new MigrationError('MIGRATION_FAILED', `migration ${m.id} failed: ${(err as Error).message}`);
        }
        applied.push(m.id);
      }
      return { applied, adopted };
    } finally {
      await conn.query(sql`SELECT pg_advisory_unlock(${LOCK_KEY})`);
    }
  });
}

/**
 * `npm run migrate -- --to-buildbot-4`: once every master sharing the database is Buildbot
 * 4.3 or Flotilla, say so in alembic_version, as `buildbot upgrade-master` would have. After
 * 0021 the schema holds what revisions 060 to 067 make, so Buildbot 4.3 accepts the database
 * (and Buildbot 3.7 no longer starts on it). Returns the revision found before.
 */
export async function recordBuildbot4(db: ConnectionPool): Promise<string> {
  return db.tx(async (tx) => {
    if ((await pendingMigrations(tx)).includes(BUILDBOT_4_SCHEMA))
      throw new MigrationError(
        'MIGRATION_PENDING',
        `${BUILDBOT_4_SCHEMA} is not applied: run the migrations first`,
      );
    const [row] = await tx.query(sql`SELECT version_num FROM public.alembic_version FOR UPDATE`);
    const before = row?.version_num as string;
    await tx.query(sql`UPDATE public.alembic_version SET version_num = ${BUILDBOT_4_ALEMBIC_REVISION}`);
    return before;
  });
}

/** The migrations of this code that `db` lacks: every one, for a database never migrated. */
export async function pendingMigrations(
  db: Queryable,
  migrations: readonly Migration[] = loadMigrations(),
): Promise<string[]> {
  const [t] = await db.query(sql`SELECT to_regclass('flotilla.migrations') IS NOT NULL AS present`);
  const done = new Set<string>(
    t.present ? (await db.query(sql`SELECT id FROM flotilla.migrations`)).map((r) => r.id as string) : [],
  );
  return migrations.filter((m) => !done.has(m.id)).map((m) => m.id);
}

/** What a process says of a database that lacks migrations: which, and what to run. */
export function pendingMessage(pending: readonly string[]): string {
  const which = pending.length > 3 ? `${pending.slice(0, 3).join(', ')}, ...` : pending.join(', ');
  return `the database lacks ${pending.length} of Flotilla's migrations (${which}): run \`npm run migrate\` (in Kubernetes, the chart's migration job), or start with MIGRATE_ON_START=true`;
}

/**
 * At a process's start. A database that lacks a migration this code needs would answer every
 * read with a 500 (schema "flotilla" does not exist, on a Buildbot database never adopted):
 * with `apply`, migrate it (under the lock, as `npm run migrate` does); without, refuse it.
 * A database migrated further than this code (an older pod during a rolling upgrade) is fine:
 * migrations only add.
 */
export async function ensureMigrated(
  pool: ConnectionPool,
  apply: boolean,
  log: (msg: string, fields?: object) => void = () => {},
): Promise<void> {
  // A database that is not there yet (starting with the cluster, failing over) is waited for:
  // that is not a reason to refuse it.
  let pending: string[];
  for (let attempt = 0; ; attempt++) {
    try {
      pending = await pendingMigrations(pool);
      break;
    } catch (err) {
      if (!isDatabaseOutage(err)) throw err;
      if (attempt === 0) log('waiting for the database', { err: (err as Error).message });
      await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** attempt)));
    }
  }
  if (pending.length === 0) return;
  if (!apply) throw new MigrationError('MIGRATION_PENDING', pendingMessage(pending));
  const res = await migrate(pool, log);
  log('migrated at start (MIGRATE_ON_START)', { applied: res.applied, adopted: res.adopted });
}

/** ensureMigrated for a process's start: a refusal is fatal (exit 2), said in the log. */
export async function ensureMigratedOrExit(pool: ConnectionPool, apply: boolean, log: Logger): Promise<void> {
  try {
    await ensureMigrated(pool, apply, (msg, fields) => log.info(fields ?? {}, msg));
  } catch (err) {
    if (!(err instanceof MigrationError)) throw err;
    log.fatal({ code: err.code }, err.message);
    process.exit(2);
  }
}

/**
 * Wait for the migration lock by polling. A session blocked inside pg_advisory_lock() holds
 * an open transaction, and CREATE INDEX CONCURRENTLY in the session holding the lock waits
 * for every open transaction to end: a deadlock. Between polls we hold none.
 */
async function takeLock(conn: Queryable): Promise<void> {
  for (;;) {
    const [row] = await conn.query(sql`SELECT pg_try_advisory_lock(${LOCK_KEY}) AS ok`);
    if (row.ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
  }
}

/** An interrupted CREATE INDEX CONCURRENTLY leaves an invalid index that IF NOT EXISTS would keep. */
async function dropInvalidIndexes(conn: Queryable): Promise<void> {
  const rows = await conn.query(sql`
    SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE NOT i.indisvalid AND n.nspname = 'public' AND c.relname LIKE 'flotilla\\_%'`);
  for (const r of rows)
    await conn.query(sql`DROP INDEX CONCURRENTLY IF EXISTS ${sql.ident('public', r.relname)}`);
}
