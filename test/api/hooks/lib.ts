// What the change hook suites share: a Fastify app with the hooks plugin on a database of
// its own (harness.ts), and the change rows a request made, read back from the database.
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { changeHooks } from '../../../services/api/hooks/index.js';
import { changeHooks as changeHooksSchema } from '../../../services/core/config/master-config/change-hooks.js';
import type { ChangeHooksConfig } from '../../../services/core/config/master-config.js';
import { sql } from '../../../services/core/db/pool.js';
import { createLogger, type Logger } from '../../../services/core/telemetry/logger.js';
import type { Harness } from '../../core/data/harness.js';

export async function hookApp(
  h: Harness,
  /** As written in the configuration (its defaults filled in here, as the loader does). */
  config: z.input<typeof changeHooksSchema> | undefined,
  env: Record<string, string | undefined> = {},
  log: Logger = createLogger('test', 'silent'),
): Promise<FastifyInstance> {
  const app = Fastify();
  // Deliveries remembered apart from every other app's (a suite sends one payload many times).
  const keyPrefix = `hooks:${randomBytes(6).toString('hex')}:`;
  const parsed: ChangeHooksConfig | undefined = config && changeHooksSchema.parse(config);
  await app.register(changeHooks, { ctx: h.ctx, config: parsed, env, keyPrefix, log });
  await app.ready();
  return app;
}

/** change_hooks.github as the loader makes it from what a configuration writes. */
export const githubConfig = (github: NonNullable<z.input<typeof changeHooksSchema>['github']>) =>
  changeHooksSchema.parse({ github }).github!;

export interface ChangeRow {
  changeid: number;
  author: string;
  committer: string | null;
  comments: string;
  branch: string | null;
  revision: string | null;
  revlink: string | null;
  when_timestamp: number;
  category: string | null;
  repository: string;
  project: string;
  codebase: string;
  files: string[];
  properties: Record<string, unknown>;
  users: number;
}

/** The changes after `afterId`, oldest first, with their files, properties and user links. */
export async function changesAfter(h: Harness, afterId: number): Promise<ChangeRow[]> {
  const rows = await h.db.pool.query(sql`
    SELECT c.changeid, c.author, c.committer, c.comments, c.branch, c.revision, c.revlink, c.when_timestamp,
           c.category, c.repository, c.project, c.codebase,
           coalesce((SELECT array_agg(f.filename) FROM change_files f WHERE f.changeid = c.changeid), '{}') AS files,
           (SELECT count(*)::int FROM change_users u WHERE u.changeid = c.changeid) AS users
    FROM changes c WHERE c.changeid > ${afterId} ORDER BY c.changeid`);
  for (const r of rows) {
    const props = await h.db.pool.query(
      sql`SELECT property_name, property_value FROM change_properties WHERE changeid = ${r.changeid}`,
    );
    r.properties = Object.fromEntries(props.map((p) => [p.property_name, JSON.parse(p.property_value)]));
  }
  return rows as ChangeRow[];
}

export async function lastChangeId(h: Harness): Promise<number> {
  const [row] = await h.db.pool.query(sql`SELECT coalesce(max(changeid), 0) AS id FROM changes`);
  return row!.id;
}
