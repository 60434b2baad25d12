// What reporters read about a build or a build request: the details Buildbot's reporters
// gather before formatting (buildbot/reporters/utils.py getDetailsForBuild,
// get_details_for_buildrequest, getPreviousBuild, getResponsibleUsersForBuild), each entity
// in the shape the REST API answers it (core/entities), so a report's JSON is the API's.
import { type Queryable, sql } from '../db/pool.js';
import { build as buildEntity } from '../entities/build.js';
import { builder as builderEntity } from '../entities/builder.js';
import { buildrequest as buildrequestEntity } from '../entities/buildrequest.js';
import { buildset as buildsetEntity } from '../entities/buildset.js';
import { jsonOf } from '../entities/field.js';
import { log as logEntity } from '../entities/log.js';
import { step as stepEntity } from '../entities/step.js';
import { Results } from '../results.js';
import { buildsetChangeAuthors } from './changes.js';
import { entity } from './entities.js';
import type { SourcedProperties } from './properties.js';

type Json = Record<string, unknown>;

export interface RequestContext {
  buildrequest: Json;
  buildset: Json;
  builder: Json;
}

/** A build request with its build set (and source stamps) and its builder; undefined if gone. */
export async function reportRequestContext(q: Queryable, brid: number): Promise<RequestContext | undefined> {
  const buildrequest = await entity(q, buildrequestEntity, brid);
  if (!buildrequest) return undefined;
  const [buildset, builder] = await Promise.all([
    entity(q, buildsetEntity, buildrequest.buildsetid as number),
    entity(q, builderEntity, buildrequest.builderid as number),
  ]);
  if (!buildset || !builder) return undefined;
  return { buildrequest, buildset, builder };
}

/** A build's parent (the build that triggered its build set) and that build's builder. */
export async function reportParent(
  q: Queryable,
  buildset: Json,
): Promise<{ parentbuild: Json | null; parentbuilder: Json | null }> {
  const id = buildset.parent_buildid as number | null;
  const parentbuild = id === null ? undefined : await entity(q, buildEntity, id);
  if (!parentbuild) return { parentbuild: null, parentbuilder: null };
  const parentbuilder = await entity(q, builderEntity, parentbuild.builderid as number);
  return { parentbuild, parentbuilder: parentbuilder ?? null };
}

/** A build's steps in order, each with its logs when `withLogs` (in creation order). */
export async function reportSteps(q: Queryable, buildid: number, withLogs: boolean): Promise<Json[]> {
  const steps: { s: Json }[] = await q.query(sql`
    SELECT ${jsonOf(stepEntity.fields)} AS s FROM steps a WHERE a.buildid = ${buildid} ORDER BY a.number`);
  if (!withLogs) return steps.map((r) => r.s);
  const logs: { l: Json }[] = await q.query(sql`
    SELECT ${jsonOf(logEntity.fields)} AS l FROM logs a
    WHERE a.stepid IN (SELECT id FROM steps WHERE buildid = ${buildid}) ORDER BY a.id`);
  return steps.map(({ s }) => ({ ...s, logs: logs.map((r) => r.l).filter((l) => l.stepid === s.stepid) }));
}

/**
 * The builder's build before this one that did not end RETRY (Buildbot's getPreviousBuild:
 * a previous build still running counts, with its results null); null when there is none.
 */
export async function reportPreviousBuild(
  q: Queryable,
  builderid: number,
  number: number,
): Promise<Json | null> {
  const [row] = await q.query(sql`
    SELECT id FROM builds WHERE builderid = ${builderid} AND number < ${number}
      AND results IS DISTINCT FROM ${Results.RETRY}
    ORDER BY number DESC LIMIT 1`);
  return row ? ((await entity(q, buildEntity, row.id)) ?? null) : null;
}

/**
 * Who a build's report is for (Buildbot's blamelist): the authors of its changes, and its
 * `owner` and `owners` properties, sorted, each once.
 */
export async function reportBlamelist(
  q: Queryable,
  bsid: number,
  props: SourcedProperties,
): Promise<string[]> {
  const users = new Set(await buildsetChangeAuthors(q, bsid));
  const add = (v: unknown) => {
    if (typeof v === 'string' && v) users.add(v);
    else if (Array.isArray(v)) for (const x of v) if (typeof x === 'string' && x) users.add(x);
  };
  add(props.owner?.[0]);
  add(props.owners?.[0]);
  return [...users].sort();
}
