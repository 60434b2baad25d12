// What the build tests read back from the database: a request added, its builds once
// finished, their steps, logs and properties.
import { execFileSync } from 'node:child_process';
import { addBuildset, findBuilderId, transact } from '../../../services/core/data/index.js';
import { sql } from '../../../services/core/db/pool.js';
import { apiInProcess } from '../../helpers/api.js';
import { eventually } from '../../helpers/wait.js';
import type { Stage } from '../in-process.js';

export interface Stamp {
  codebase?: string;
  repository?: string;
  branch?: string | null;
  revision?: string | null;
  /** A patch on the stamp (a try build's). */
  patch?: { body: string; level?: number; subdir?: string; author?: string; comment?: string };
}

/** A build request for `builder` on these source stamps (default: codebase '' at main/abc). */
export function request(
  stage: Stage,
  builder: string,
  stamps: Stamp[] = [{}],
  properties: Record<string, [unknown, string]> = {},
): Promise<{ bsid: number; brid: number }> {
  return transact(stage.ctx, async (tx) => {
    const builderid = (await findBuilderId(tx, builder, false))!;
    const added = await addBuildset(tx, {
      scheduler: 'test',
      sourcestamps: stamps.map((s) => ({
        codebase: s.codebase ?? '',
        repository: s.repository ?? 'r',
        branch: s.branch === undefined ? 'main' : s.branch,
        revision: s.revision === undefined ? 'abc' : s.revision,
        project: '',
        ...(s.patch
          ? {
              patch_body: s.patch.body,
              patch_level: s.patch.level ?? 1,
              patch_subdir: s.patch.subdir ?? null,
              patch_author: s.patch.author ?? '',
              patch_comment: s.patch.comment ?? '',
            }
          : {}),
      })),
      reason: 'test',
      builderids: [builderid],
      properties,
    });
    return { bsid: added.bsid, brid: added.brids[builderid]! };
  });
}

export interface BuildRow {
  id: number;
  results: number | null;
  state_string: string;
}

/** The request's first build, once finished. */
export async function finishedBuild(stage: Stage, brid: number, timeoutMs = 30_000): Promise<BuildRow> {
  const rows = await eventually(
    () =>
      stage.db.pool.query(
        sql`SELECT id, results, state_string FROM builds WHERE buildrequestid = ${brid} ORDER BY id`,
      ) as Promise<BuildRow[]>,
    (bs) => bs.some((b) => b.results !== null),
    { timeoutMs },
  );
  return rows.find((b) => b.results !== null)!;
}

export function steps(
  stage: Stage,
  buildid: number,
): Promise<{ name: string; results: number; state_string: string; hidden: number; urls_json: string }[]> {
  return stage.db.pool.query(sql`
    SELECT name, results, state_string, hidden, urls_json FROM steps WHERE buildid = ${buildid} ORDER BY number`);
}

/** A step's logs by name, each as its stored text (an 's' log's lines keep their stream letter). */
export async function logs(stage: Stage, buildid: number, step: string): Promise<Record<string, string>> {
  const rows = await stage.db.pool.query(sql`
    SELECT l.name, string_agg(convert_from(c.content, 'UTF8'), E'\n' ORDER BY c.first_line) AS text
    FROM logs l JOIN steps s ON s.id = l.stepid LEFT JOIN logchunks c ON c.logid = l.id
    WHERE s.buildid = ${buildid} AND s.name = ${step} GROUP BY l.id, l.name ORDER BY l.id`);
  return Object.fromEntries(rows.map((r) => [r.name, r.text ?? '']));
}

export async function property(stage: Stage, buildid: number, name: string): Promise<unknown> {
  const [row] = await stage.db.pool.query(
    sql`SELECT value FROM build_properties WHERE buildid = ${buildid} AND name = ${name}`,
  );
  return row ? JSON.parse(row.value) : undefined;
}

/** The build of a request just made for `builder`, once finished, and the steps it ran but worker_preparation. */
export async function ranBuild(stage: Stage, builder: string, timeoutMs = 90_000) {
  const { brid } = await request(stage, builder);
  const build = await finishedBuild(stage, brid, timeoutMs);
  const ran = (await steps(stage, build.id)).filter((s) => s.name !== 'worker_preparation');
  return { build, ran };
}

/** An API (in-process, on the stage's database and Redis) to read builds back through REST. */
export async function apiOn(stage: Stage) {
  const api = await apiInProcess({
    db: stage.db,
    redis: stage.redis.url,
    publicUrl: 'http://ci.example.test/',
  });
  return {
    app: api.app,
    get: (path: string) => api.app.inject({ method: 'GET', url: `/api/v2${path}` }),
    close: api.stop,
  };
}

/** `git ARGS` in `cwd` with a fixed author and committer; its stdout, trimmed. */
export function gitIn(cwd: string, ...args: string[]): string {
  const who = {
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@e',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@e',
  };
  return execFileSync('git', args, { cwd, env: { ...process.env, ...who }, encoding: 'utf8' }).trim();
}
