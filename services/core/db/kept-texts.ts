// Each statement's formatted text kept by its shape, for a pool's queries. @databases/pg
// formats a query at each run (its parts' text joined, then dedented: split into lines, a
// regular expression on each, joined again) and scans it for a `;` to split it into
// statements; a statement's text is the same at every run when only its values change. Both
// depend only on the query's parts (raw text and where the values go), so they are worked
// out once per shape and handed to each later query of that shape as what its own per-
// formatter memo (SQLQuery's `_cache`) would hold: the driver then reads them from there.
// The text is also the same string each time, so the prepared name's lookup by text
// (prepared-statements.ts) hashes it once. What it saves: a start's step writes (core/data's
// own) formatted 2.7-5.7 µs a statement at load 11 (05:59) and 8.1-12.7 at load 21 (06:24),
// kept 1.3-2.0 and 2.7-4.1 µs (`node --import tsx load/bench/kept-texts.ts --rounds 50000
// --turns 5`); in phase S's profiles the formatting went from 4.2% to 1.4% of the masters'
// busy samples outside the socket writes, core/db's own frames from 1.0% to 2.4% (this
// walk), 05:52 and 06:00, profile-window.ts (load/results/fleet.md, 2026-11-29 05:52-06:42).
//
// A shape is the sequence of the parts, each raw text by its content, each value as one
// marker, kept as a trie of maps (the raw texts are a template's strings, whose hashes V8
// computes once). A query with an identifier (sql.ident) is formatted as before.
import { type ConnectionPool, pgFormat, type Queryable, type SQLQuery } from '@databases/pg';
import { hasSemicolonBeforeEnd } from '@databases/split-sql-query';

/**
 * The bound on the trie's nodes (one a part of each distinct shape), past which a new shape
 * is formatted at each run as before. Texts built from a list (`$1, ..., $n` for n items) are
 * distinct shapes; the masters' and APIs' 104 distinct texts with parameters in phases 0 and
 * S (prepared-statements.ts' MAX_TEXTS) are a few thousand parts.
 */
export const MAX_PARTS = 16_384;

/** @databases/sql's parts of a query (SQLItemType: 0 raw text, 1 a value, 2 an identifier). */
interface Part {
  readonly type: 0 | 1 | 2;
  readonly text?: string;
  readonly value?: unknown;
}
interface Internals {
  readonly _items: readonly Part[];
  readonly _cache: Map<unknown, unknown>;
}

interface Node {
  /** The first key seen after this one, and its node: most shapes share no prefix. */
  firstKey?: string | symbol;
  first?: Node;
  /** The others. */
  next?: Map<string | symbol, Node>;
  text?: string;
  severalStatements?: boolean;
}

const VALUE = Symbol('value');

// split-sql-query asks `query.format(f)` with its own formatter `f` (not exported) whether a
// query holds a `;` before its end; asked of an object that only records the formatter, it
// hands that formatter over, and a query's memo can then answer for it.
let semicolonFormatter: unknown;
hasSemicolonBeforeEnd({
  format: (f: unknown) => {
    semicolonFormatter = f;
    return false;
  },
} as unknown as SQLQuery);

export class KeptTexts {
  private readonly root: Node = {};
  private parts = 0;

  constructor(private readonly maxParts = MAX_PARTS) {}

  /** Hands `query` its formatted text and statement count when its shape was seen before. */
  keep(query: SQLQuery): void {
    const q = query as unknown as Internals;
    let node = this.root;
    const values: unknown[] = [];
    for (const part of q._items) {
      let key: string | symbol;
      if (part.type === 0) key = part.text as string;
      else if (part.type === 1) {
        key = VALUE;
        values.push(part.value);
      } else return;
      // A template's strings are the same string objects at each run: `===` compares pointers.
      let next = node.firstKey === key ? node.first : node.next?.get(key);
      if (!next) {
        if (this.parts >= this.maxParts) return;
        this.parts++;
        next = {};
        if (node.first === undefined) {
          node.firstKey = key;
          node.first = next;
        } else {
          node.next ??= new Map();
          node.next.set(key, next);
        }
      }
      node = next;
    }
    if (node.text === undefined) {
      node.text = query.format(pgFormat).text;
      node.severalStatements = hasSemicolonBeforeEnd(query);
      return;
    }
    // A fresh object each run: the driver's handlers write the statement's name on it.
    q._cache.set(pgFormat, { text: node.text, values });
    if (semicolonFormatter) q._cache.set(semicolonFormatter, node.severalStatements);
  }

  /** How many parts the trie holds (at most the bound). */
  get size(): number {
    return this.parts;
  }
}

/**
 * The pool's own queries and those of its transactions given their kept texts; `onTransaction`
 * told of each transaction first.
 */
export function keepTexts(
  pool: ConnectionPool,
  kept: KeptTexts,
  onTransaction?: (t: Queryable) => void,
): void {
  const keepAll = (q: SQLQuery | SQLQuery[]) => {
    if (Array.isArray(q)) for (const one of q) kept.keep(one);
    else kept.keep(q);
  };
  const query = pool.query.bind(pool) as (q: SQLQuery | SQLQuery[]) => Promise<unknown>;
  pool.query = ((q: SQLQuery | SQLQuery[]) => {
    keepAll(q);
    return query(q);
  }) as ConnectionPool['query'];
  const tx = pool.tx.bind(pool);
  pool.tx = ((fn: (t: Queryable) => Promise<unknown>, options?: Parameters<ConnectionPool['tx']>[1]) =>
    tx((t) => {
      onTransaction?.(t);
      const run = t.query.bind(t) as (q: SQLQuery | SQLQuery[]) => Promise<unknown>;
      (t as { query: unknown }).query = (q: SQLQuery | SQLQuery[]) => {
        keepAll(q);
        return run(q);
      };
      return fn(t);
    }, options)) as ConnectionPool['tx'];
}
