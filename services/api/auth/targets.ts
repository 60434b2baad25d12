// What authorization needs to know about the thing a request or an event is about: the
// builder of a build, build request, step, log, test result set or artifact, a builder's
// name, and the owner of a build or build request (the `owner` property of its build set, as
// Buildbot reads it). Builders never change for these rows, so answers are cached (bounded);
// owners are read each time. The statements are core/data's; which row a path names, the
// read path's.
import { allBuilders, builderIdByName, builderName } from '../../core/data/index.js';
import {
  type BuilderOwned,
  buildOwnership,
  buildRequestBuilder,
  buildRequestOwner,
  owningBuilderId,
} from '../../core/data/owners.js';
import type { Queryable } from '../../core/db/pool.js';
import { idOfSegment } from '../../core/identifiers.js';
import { plainReader, type RowReader } from '../db-routing/read-pool.js';
import { entityKey } from '../query/run.js';
import type { Match } from '../registry/paths.js';

/** A part of a path that names something owned by a builder. */
export type Ref =
  | { kind: 'builder'; id: number }
  | { kind: 'builder-name'; name: string }
  | { kind: BuilderOwned; id: number };

const BY_ID: Record<string, Ref['kind']> = {
  builders: 'builder',
  builds: 'build',
  buildrequests: 'buildrequest',
  steps: 'step',
  logs: 'log',
  test_result_sets: 'test_result_set',
  // /artifacts/{id} and its /raw name no builder: without this they were in no builder's
  // scope, and every hidden builder's artifacts were readable by id (issue 28).
  artifacts: 'artifact',
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
  'artifacts',
  // Flotilla's builds of many changes (registry/resources/change-builds.ts).
  'change_builds',
  // A worker's `configured_on` names builder ids, a hidden one's too; under a builder it
  // lists only that builder's (core/entities/worker.ts), so the builder's rules decide there.
  'workers',
]);

const TRIGGERED = 'triggered_builds';

// A force scheduler's `builder_names` names every builder it forces, a hidden one's too, on
// any path, a builder's included (`builders/{id}/forceschedulers`): read as a list of several
// builders' data.
const FORCE_SCHEDULERS = 'forceschedulers';

/**
 * What a path (REST path segments, or an event routing key without its last element) says
 * about builders: the first builder-owned thing it names, `mixed` when it reads builder data
 * without naming one (e.g. /builds), `none` when it reads no builder's data.
 */
export function builderScope(segments: readonly string[]): { ref: Ref } | 'mixed' | 'none' {
  // A build's triggered builds (Buildbot 4.3) belong to the builders it triggered, not to its own.
  if (segments.at(-1) === TRIGGERED) return 'mixed';
  // The thing read is the last collection named: the last segment, or the one before a key.
  if (segments.at(-1) === FORCE_SCHEDULERS || segments.at(-2) === FORCE_SCHEDULERS) return 'mixed';
  for (let i = 0; i + 1 < segments.length; i++) {
    const kind = BY_ID[segments[i]!];
    const v = segments[i + 1]!;
    if (!kind) continue;
    const id = idOfSegment(v);
    if (id !== null) return { ref: { kind, id } as Ref };
    // Any name: a builder's may hold spaces since Buildbot 4.1 (`builders/s:buildername`).
    if (kind === 'builder' && v !== '') return { ref: { kind: 'builder-name', name: v } };
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
  private readonly reads: RowReader;

  constructor(private readonly db: Queryable) {
    this.reads = plainReader(db);
  }

  async builderName(id: number): Promise<string | null> {
    const hit = this.names.get(id);
    if (hit !== undefined) return hit;
    const name = await builderName(this.db, id);
    // Only what exists is cached: a builder made later must be found then.
    if (name !== null) this.names.set(id, name);
    return name;
  }

  /** The name of the builder a ref belongs to; null when it names nothing that exists. */
  async builderNameOf(ref: Ref): Promise<string | null> {
    if (ref.kind === 'builder-name')
      return (await builderIdByName(this.db, ref.name)) === null ? null : ref.name;
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
      id = await owningBuilderId(this.db, ref.kind, ref.id);
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
    this.allNames ??= allBuilders(this.db)
      .then((rows) => rows.map((r) => r.name))
      .finally(() => {
        this.allNames = null;
      });
    return this.allNames;
  }

  private allNames: Promise<string[]> | null = null;

  /** Every builder's name, so events about builders are decided from the start. */
  async primeBuilders(): Promise<void> {
    for (const r of await allBuilders(this.db)) this.names.set(r.id, r.name);
  }

  /** The build (id, builder name) an endpoint names, if it is one of a build and exists. */
  async build(match: Match): Promise<{ id: number; builder: string; buildrequestid: number } | null> {
    const id = await entityKey(this.reads, match.endpoint, match.args);
    if (typeof id !== 'number') return null;
    const b = await buildOwnership(this.db, id);
    return b ? { id, ...b } : null;
  }

  async buildRequest(match: Match): Promise<{ id: number; builder: string } | null> {
    const id = await entityKey(this.reads, match.endpoint, match.args);
    if (typeof id !== 'number') return null;
    const builder = await buildRequestBuilder(this.db, id);
    return builder === null ? null : { id, builder };
  }

  /** The `owner` property of a build request's build set (null when none). */
  ownerOfBuildRequest(brid: number): Promise<string | null> {
    return buildRequestOwner(this.db, brid);
  }
}
