// What the data-operation suites share: a fresh database whose id sequences start at random
// high values (so events from suites running side by side on the one Redis channel cannot be
// mistaken for ours), a DataContext on it, a tap on the Redis event channel, the read API's
// own answer for a path, and rows to build on.
import { randomBytes, randomInt } from 'node:crypto';
import { Redis } from 'ioredis';
import { plainReader } from '../../../services/api/db-routing/read-pool.js';
import { entities } from '../../../services/api/query/envelope.js';
import { readProperties, readRows } from '../../../services/api/query/run.js';
import { buildRegistry } from '../../../services/api/registry/index.js';
import { addBuildset } from '../../../services/core/data/buildsets.js';
import { nameHash } from '../../../services/core/data/names.js';
import { type DataContext, type Tx, transact } from '../../../services/core/data/transaction.js';
import {
  type ConnectionPool,
  createPool,
  type Queryable,
  type SQLQuery,
  sql,
} from '../../../services/core/db/pool.js';
import {
  type BusMessage,
  EVENTS_CHANNEL,
  EVENTS_WITH_IDS_CHANNEL,
} from '../../../services/core/events/bus.js';
import { publisherFor } from '../../../services/core/events/publisher.js';
import { createDatabase, type TEMPLATES, type TestDatabase } from '../../helpers/databases.js';
import { testEnv } from '../../helpers/env.js';

export interface Harness {
  db: TestDatabase;
  ctx: DataContext;
  /** A pool of its own with room for many concurrent transactions. */
  wide: ConnectionPool;
  tap: EventTap;
  run<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export async function openHarness(template: keyof typeof TEMPLATES = 'migrated'): Promise<Harness> {
  const db = await createDatabase(template);
  // 200,000 slots of 10,000 ids below 2^31: two suites sharing a slot (and so event keys) is
  // a one-in-200,000 chance per pair, and no suite makes 10,000 rows of one table.
  const base = randomInt(1, 200_000) * 10_000;
  const seqs = await db.pool.query(sql`SELECT sequence_name FROM information_schema.sequences
                                      WHERE sequence_schema = 'public'`);
  for (const s of seqs)
    await db.pool.query(sql`SELECT setval(${`public.${s.sequence_name}`}::regclass, ${base}, false)`);
  const redis = new Redis(testEnv().redisUrl, { lazyConnect: false, maxRetriesPerRequest: 3 });
  const ctx: DataContext = { db: db.pool, redis };
  const wide = createPool(db.url, { poolSize: 16 });
  // Events go out in the background after commit: the tap waits for this context's first.
  const tap = await EventTap.open(() => publisherFor(redis).flushed());
  return {
    db,
    ctx,
    wide,
    tap,
    run: (fn) => transact(ctx, fn),
    close: async () => {
      await tap.close();
      redis.disconnect();
      await wide.dispose();
      await db.drop();
    },
  };
}

/** Everything published on the event channel since it was opened (or last cleared). */
export class EventTap {
  readonly seen: BusMessage[] = [];
  private waiters = new Map<string, () => void>();

  private constructor(
    private readonly sub: Redis,
    private readonly pub: Redis,
    private readonly published: () => Promise<void>,
  ) {}

  /** `published` resolves once the events committed so far have been handed to Redis. */
  static async open(published: () => Promise<void> = async () => {}): Promise<EventTap> {
    const sub = new Redis(testEnv().redisUrl);
    const pub = new Redis(testEnv().redisUrl);
    const tap = new EventTap(sub, pub, published);
    // Events from the channel with every event (the masters' carries only the kinds they act
    // on), each without its stream id, so that an event compares as {k, m}. The markers go on
    // the masters' channel, which no API pod reads: one connection hears both channels in the
    // order they were published on.
    sub.on('message', (channel: string, text: string) => {
      const { id: _id, ...msg } = JSON.parse(text) as BusMessage;
      const done = tap.waiters.get(msg.k);
      if (done) done();
      else if (channel === EVENTS_WITH_IDS_CHANNEL) tap.seen.push(msg);
    });
    await sub.subscribe(EVENTS_WITH_IDS_CHANNEL, EVENTS_CHANNEL);
    return tap;
  }

  /** Waits until everything published before this call has arrived (a marker of our own follows it). */
  async settle(): Promise<void> {
    const k = `test/marker/${randomBytes(6).toString('hex')}`;
    const arrived = new Promise<void>((resolve) => this.waiters.set(k, resolve));
    await this.published();
    await this.pub.publish(EVENTS_CHANNEL, JSON.stringify({ k, m: null }));
    await arrived;
    this.waiters.delete(k);
  }

  /** Forgets what arrived so far (after everything published before the call has arrived). */
  async clear(): Promise<void> {
    await this.settle();
    this.seen.length = 0;
  }

  /** Settles, then the events whose key starts with one of `prefixes` (all when none given). */
  async events(...prefixes: string[]): Promise<BusMessage[]> {
    await this.settle();
    return this.seen.filter((e) => prefixes.length === 0 || prefixes.some((p) => e.k.startsWith(p)));
  }

  /**
   * The events under `prefix`, each as its key's rest and its message with the fields that
   * differ between two entities (`blank`: their ids and names) blanked and times reduced to
   * set or not: two ways of writing the same thing compare equal.
   */
  async shapes(
    prefix: string,
    blank: readonly string[],
  ): Promise<{ k: string; m: Record<string, unknown> }[]> {
    const when = (v: unknown) => (v === null ? null : typeof v);
    return (await this.events(prefix)).map((e) => {
      const m = { ...(e.m as Record<string, unknown>) };
      for (const f of blank) m[f] = null;
      for (const f of ['started_at', 'complete_at']) if (f in m) m[f] = when(m[f]);
      return { k: e.k.slice(prefix.length), m };
    });
  }

  async keys(...prefixes: string[]): Promise<string[]> {
    return (await this.events(...prefixes)).map((e) => e.k);
  }

  async close(): Promise<void> {
    this.sub.disconnect();
    this.pub.disconnect();
  }
}

const registry = buildRegistry([]);

/** What GET /api/v2/<path> would answer: the rows of its envelope. */
export async function apiGet(db: ConnectionPool, path: string): Promise<Record<string, unknown>[]> {
  const segments = path.split('/');
  const match = registry.matcher.match(segments);
  if (!match) throw new Error(`no endpoint for ${path}`);
  const spec = { fields: null, filters: [], order: null, limit: null, offset: null, properties: null };
  const { env } =
    match.endpoint.kind === 'properties'
      ? await readProperties(plainReader(db), match.endpoint, match.args)
      : await readRows(plainReader(db), registry, match.endpoint, match.args, segments, spec);
  return entities(env);
}

/** A unique name for this run (names are global in one database). */
export const uniq = (prefix: string): string => `${prefix}-${randomBytes(4).toString('hex')}`;

export async function insertMaster(
  tx: Tx,
  name = uniq('master'),
  active = 1,
  lastActive = 0,
): Promise<number> {
  const [m] = await tx.q.query(sql`
    INSERT INTO masters (name, name_hash, active, last_active) VALUES (${name}, ${nameHash(name)}, ${active}, ${lastActive})
    RETURNING id`);
  return m.id;
}

export async function insertBuilder(tx: Tx, name = uniq('builder')): Promise<number> {
  const [b] = await tx.q.query(
    sql`INSERT INTO builders (name, name_hash) VALUES (${name}, ${nameHash(name)}) RETURNING id`,
  );
  return b.id;
}

export async function insertWorker(tx: Tx, name = uniq('worker')): Promise<number> {
  const [w] = await tx.q.query(sql`INSERT INTO workers (name, info) VALUES (${name}, '{}') RETURNING id`);
  return w.id;
}

/** `n` pending build requests on one builder (one build set). */
export async function pendingRequests(tx: Tx, builderid: number, n: number): Promise<number[]> {
  const builderids = Array.from({ length: n }, () => builderid);
  // addBuildset gives one request per builder id; several on one builder need several sets.
  const brids: number[] = [];
  for (const id of builderids) {
    const { brids: added } = await addBuildset(tx, {
      scheduler: 'test',
      sourcestamps: [{ branch: 'main', revision: uniq('rev'), repository: 'r', project: 'p', codebase: '' }],
      reason: 'test',
      builderids: [id],
    });
    brids.push(added[id]!);
  }
  return brids;
}

/** What a build needs: a master, a builder, a worker and a pending request on that builder. */
export async function buildParts(
  tx: Tx,
): Promise<{ masterid: number; builderid: number; workerid: number; brid: number }> {
  const builderid = await insertBuilder(tx);
  const [brid] = await pendingRequests(tx, builderid, 1);
  return { masterid: await insertMaster(tx), builderid, workerid: await insertWorker(tx), brid: brid! };
}

/** A gate that lets `n` callers through at the same moment. */
export function barrier(n: number): () => Promise<void> {
  let waiting = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return async () => {
    waiting++;
    if (waiting === n) open();
    await opened;
  };
}

/** The transaction, and a count of the statements sent through it. */
export function counted(tx: Tx): { tx: Tx; statements: () => number } {
  let n = 0;
  const query = (statement: SQLQuery) => {
    n++;
    return tx.q.query(statement);
  };
  const q = { query } as unknown as Queryable;
  return { tx: { q, out: tx.out }, statements: () => n };
}
