// A page of the REST API, read: one entry (PageReader.read) that owns the page cache's part
// of a read, so that the GET handler (http/rest.ts) only matches, authorizes, reads and
// sends. A page is a collection or an entity of rows, a properties object, or a range of a
// log's lines; downloads stream and are read by logs.ts and artifacts.ts.
//
// The order matters for freshness (../cache/README.md): a kept page is looked up first; a
// miss takes the write versions and the notices' mark before the read, reads the rows with
// their version in the same snapshot, and stores the rendered page with the keys of the
// parts it read (page-keys.ts).

import type { PageCache } from '../cache/page-cache.js';
import type { RowReader } from '../db-routing/read-pool.js';
import { renderEnvelope, wantsJson } from '../query/envelope.js';
import { groupArgs, parseResultSpec } from '../query/parse.js';
import { PreparedReads, prepareRows, readPrepared, readProperties } from '../query/run.js';
import type { Registry } from '../registry/index.js';
import type { EndpointKind } from '../registry/model.js';
import type { Match } from '../registry/paths.js';
import { etagOf, type Rendered } from '../reply/etag.js';
import type { LogReader } from './logs.js';
import { pageKeys } from './page-keys.js';

/** What a page is read and kept with. */
export interface PageDeps {
  reads: RowReader;
  registry: Registry;
  logs: LogReader;
  /** Rendered pages kept while their tables are unchanged; null when turned off. */
  pages: PageCache | null;
}

/** What the handler asks for: the endpoint matched, and the request as sent. */
export interface PageRequest {
  match: Match;
  /** The path below /api/v2, decoded (a collection's parent is looked up by it). */
  segments: readonly string[];
  /** Path and query as sent: the page cache's key, with the Accept form. */
  url: string;
  query: string;
  accept: string | undefined;
}

/** A page to send: the body, its ETag, and the Link header of a collection with more rows. */
export interface PageAnswer extends Rendered {
  etag: string;
  link: string | null;
  /** The body already encoded, when it was read afresh (encoded once, hashed and sent). */
  encoded?: Buffer;
}

const PAGE_KINDS: ReadonlySet<EndpointKind> = new Set(['rows', 'properties', 'logchunk']);

/** Whether the endpoint answers a page (PageReader.read), rather than a download. */
export function isPage(kind: EndpointKind): boolean {
  return PAGE_KINDS.has(kind);
}

function nextLink(url: string, offset: number, limit: number): string {
  const u = new URL(url || '/', 'http://x');
  u.searchParams.set('offset', String(offset + limit));
  return `<${u.pathname}${u.search}>; rel="next"`;
}

export class PageReader {
  private readonly prepared = new PreparedReads();

  constructor(private readonly deps: PageDeps) {}

  /** The page, kept or read afresh (and then kept, when its tables have versions). */
  async read(r: PageRequest): Promise<PageAnswer> {
    const { pages } = this.deps;
    const key = pages ? `${wantsJson(r.accept) ? 'j' : 't'}${r.url}` : null;
    const kept = key ? await pages!.lookup(key) : null;
    if (kept) return kept;

    const { endpoint, args } = r.match;
    const spec = () => parseResultSpec(groupArgs(r.query), endpoint.resource.fields, endpoint.collection);
    const rows =
      endpoint.kind === 'rows'
        ? this.prepared.get(r.url, () => prepareRows(this.deps.registry, endpoint, args, r.segments, spec()))
        : null;
    const resultSpec = rows?.spec ?? spec();
    const versions = pages ? await pages.versions.get() : null;
    // Before the read: a write the page might miss is then noticed after this mark.
    const mark = pages?.mark() ?? -1;
    // Compact JSON is read as PostgreSQL writes it (the text form, query/compile.ts).
    const read = rows?.text && wantsJson(r.accept) ? rows.text : rows;
    const { env, stamp, pathIds } = read
      ? await readPrepared(this.deps.reads, endpoint, read, versions)
      : endpoint.kind === 'properties'
        ? await readProperties(this.deps.reads, endpoint, args, versions)
        : await this.deps.logs.contents(endpoint, args, resultSpec, versions);
    let link: string | null = null;
    if (endpoint.collection && resultSpec.limit && env.total !== null) {
      const offset = resultSpec.offset ?? 0;
      if (offset + resultSpec.limit < env.total) {
        link = rows?.next ?? nextLink(r.url, offset, resultSpec.limit);
        if (rows) rows.next = link;
      }
    }
    const rendered = renderEnvelope(env, r.accept);
    const bytes = Buffer.from(rendered.body);
    const etag = etagOf(bytes);
    if (key && stamp) {
      const keys = pageKeys(endpoint, args, resultSpec, stamp.tables, env, pathIds);
      pages!.store(key, { ...stamp, keys, ...rendered, etag, link, mark });
    }
    return { ...rendered, etag, link, encoded: bytes };
  }
}
