// What authorization needs to know about the thing a request or an event is about: the
// builder of a build, build request, step, log or test result set, a builder's name, and the
// owner of a build or build request (the `owner` property of its build set, as Buildbot
// reads it). Builders never change for these rows, so answers are cached (bounded); owners
// are read each time.
import { type Queryable, type SQLQuery, sql } from '../../core/db/pool.js';
import { idOfSegment, isUrlIdentifier } from '../../core/identifiers.js';
import type { Match } from '../registry/paths.js';

/** A part of a path that names something owned by a builder. */
export type Ref =
  | { kind: 'builder'; id: number }
  | { kind: 'builder-name'; name: string }
  | { kind: 'build' | 'buildrequest' | 'step' | 'log' | 'test_result_set'; id: number };

const BY_ID: Record<string, Ref['kind']> = {
  builders: 'builder',
  builds: 'build',
  buildrequests: 'buildrequest',
  steps: 'step',
  logs: 'log',
  test_result_sets: 'test_result_set',
};

// Collections whose items belong to builders: a path through one of these without a
// builder-owned id names things of any builder.
const BUILDER_DATA = new Set([
  'builders',
  'builds',
  'buildrequests',
  'buildsets',
  'steps',
  'logs',
  'logchunks',
  'test_result_sets',
  'test_results',
]);

/**
 * What a path (REST path segments, or an event routing key without its last element) says
 * about builders: the first builder-owned thing it names, `mixed` when it reads builder data
 * without naming one (e.g. /builds), `none` when it reads no builder's data.
 */
export function builderScope(segments: readonly string[]): { ref: Ref } | 'mixed' | 'none' {
  for (let i = 0; i + 1 < segments.length; i++) {
    const kind = BY_ID[segments[i]!];
    const v = segments[i + 1]!;
    if (!kind) continue;
    const id = idOfSegment(v);
    if (id !== null) return { ref: { kind, id } as Ref };
    if (kind === 'builder' && isUrlIdentifier(v)) return { ref: { kind: 'builder-name', name: v } };
  }
  return segments.some((s) => BUILDER_DATA.has(s)) ? 'mixed' : 'none';
}

class Bounded<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly max: number) {}
  get(k: K): V | undefined {
    return this.map.get(k);
  }
  set(k: K, v: V): void {
    if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value as K);
    this.map.set(k, v);
  }
}

export class Targets {
  private readonly builderOf = new Bounded<string, number | null>(20_000);
  private readonly names = new Bounded<number, string | null>(5_000);

  constructor(private readonly db: Queryable) {}

  private async one(query: SQLQuery): Promise<Record<string, any> | undefined> {
    return (await this.db.query(query))[0];
  }

  async builderName(id: number): Promise<string | null> {
    const hit = this.names.get(id);
    if (hit !== undefined) return hit;
    const row = await this.one(sql`SELECT name FROM builders WHERE id = ${id}`);
    const name = (row?.name as string | undefined) ?? null;
    // Only what exists is cached: a builder made later must be found then.
    if (name !== null) this.names.set(id, name);
    return name;
  }

  /** The name of the builder a ref belongs to; null when it names nothing that exists. */
  async builderNameOf(ref: Ref): Promise<string | null> {
    if (ref.kind === 'builder-name') {
      const row = await this.one(sql`SELECT name FROM builders WHERE name = ${ref.name}`);
      return (row?.name as string | undefined) ?? null;
    }
    if (ref.kind === 'builder') return this.builderName(ref.id);
    const key = `${ref.kind}:${ref.id}`;
    // An event reaches every client at once: one lookup answers all of them.
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.lookUpBuilderOf(ref, key).finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return pending;
  }

  private readonly inflight = new Map<string, Promise<string | null>>();

  private async lookUpBuilderOf(ref: Exclude<Ref, { kind: 'builder' | 'builder-name' }>, key: string) {
    let id = this.builderOf.get(key);
    if (id === undefined) {
      const q = {
        build: sql`SELECT builderid FROM builds WHERE id = ${ref.id}`,
        buildrequest: sql`SELECT builderid FROM buildrequests WHERE id = ${ref.id}`,
        step: sql`SELECT b.builderid FROM steps s JOIN builds b ON b.id = s.buildid WHERE s.id = ${ref.id}`,
        log: sql`SELECT b.builderid FROM logs l JOIN steps s ON s.id = l.stepid
                 JOIN builds b ON b.id = s.buildid WHERE l.id = ${ref.id}`,
        test_result_set: sql`SELECT builderid FROM test_result_sets WHERE id = ${ref.id}`,
      }[ref.kind];
      const row = await this.one(q);
      id = (row?.builderid as number | undefined) ?? null;
      if (id !== null) this.builderOf.set(key, id);
    }
    return id === null ? null : this.builderName(id);
  }

  /**
   * The builder name of a ref from the caches alone: a string, null when it names nothing
   * that exists, undefined when not known (then builderNameOf looks it up). A builder named
   * in a path is never taken from the caches: whether it exists is the database's to say.
   */
  cachedBuilderNameOf(ref: Ref): string | null | undefined {
    if (ref.kind === 'builder-name') return undefined;
    const id = ref.kind === 'builder' ? ref.id : this.builderOf.get(`${ref.kind}:${ref.id}`);
    return id === undefined ? undefined : id === null ? null : this.names.get(id);
  }

  /** Every builder's name, now (a list read is decided for each). Concurrent asks share one query. */
  builderNames(): Promise<string[]> {
    this.allNames ??= this.db
      .query(sql`SELECT name FROM builders ORDER BY id`)
      .then((rows) => rows.map((r) => r.name as string))
      .finally(() => {
        this.allNames = null;
      });
    return this.allNames;
  }

  private allNames: Promise<string[]> | null = null;

  /** Every builder's name, so events about builders are decided from the start. */
  async primeBuilders(): Promise<void> {
    const rows = await this.db.query(sql`SELECT id, name FROM builders`);
    for (const r of rows) this.names.set(r.id as number, r.name as string);
  }

  /** The build (id, builder name) an endpoint names, if it is one of a build and exists. */
  async build(match: Match): Promise<{ id: number; builder: string; buildrequestid: number } | null> {
    const conds = match.endpoint.scope(match.args);
    const row = await this.one(
      sql`SELECT a.id, a.buildrequestid, bl.name FROM builds a JOIN builders bl ON bl.id = a.builderid
          WHERE ${conds.length ? sql.join(conds, sql` AND `) : sql`true`} LIMIT 1`,
    );
    return row ? { id: row.id, builder: row.name, buildrequestid: row.buildrequestid } : null;
  }

  async buildRequest(match: Match): Promise<{ id: number; builder: string } | null> {
    const conds = match.endpoint.scope(match.args);
    const row = await this.one(
      sql`SELECT a.id, bl.name FROM buildrequests a JOIN builders bl ON bl.id = a.builderid
          WHERE ${conds.length ? sql.join(conds, sql` AND `) : sql`true`} LIMIT 1`,
    );
    return row ? { id: row.id, builder: row.name } : null;
  }

  /** The `owner` property of a build request's build set (null when none). */
  async ownerOfBuildRequest(brid: number): Promise<string | null> {
    const row = await this.one(
      sql`SELECT p.property_value FROM buildrequests br
          JOIN buildset_properties p ON p.buildsetid = br.buildsetid AND p.property_name = 'owner'
          WHERE br.id = ${brid}`,
    );
    if (!row) return null;
    try {
      const v = JSON.parse(row.property_value as string);
      return Array.isArray(v) && typeof v[0] === 'string' ? v[0] : null;
    } catch {
      return null;
    }
  }
}
