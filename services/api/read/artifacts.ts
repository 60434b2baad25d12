// Artifact downloads (artifacts/{artifactid}/raw): the bytes of a complete artifact, streamed
// from its PostgreSQL large object or, once moved, from its object in the store
// (services/core/artifacts/read.ts), a range at a time, so an artifact of any size is served in
// constant memory by any pod. A moved artifact on a pod without object_store is a 503 before
// the answer starts, not a body cut short.
// A directory's artifact is its tar archive, named so (.tar, .tar.gz, .tar.bz2). An
// artifact never changes once complete (a new upload of its name is a new artifact), so its
// id and length make its ETag.
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readArtifactRange, storeForArtifact } from '../../core/artifacts/read.js';
import { type ArtifactRow, completeArtifactById } from '../../core/data/index.js';
import type { RowSource } from '../../core/db/pool.js';
import type { ObjectStore } from '../../core/objstore/client.js';
import type { RowReader } from '../db-routing/read-pool.js';
import { notFound } from '../errors/catalogue.js';
import type { Endpoint, PathArgs } from '../registry/model.js';
import { notModified } from '../reply/etag.js';

// Bytes per round trip: memory per download stays about this.
const RANGE = 1024 * 1024;

const SUFFIX = { gz: '.tar.gz', bz2: '.tar.bz2' } as const;
const TYPES = { gz: 'application/gzip', bz2: 'application/x-bzip2' } as const;

/** The file name a download is saved as: the name's last part, a directory's with its archive's suffix. */
function filename(a: ArtifactRow): string {
  const base = a.name.replace(/\/+$/, '').split('/').pop() || 'artifact';
  return a.kind === 'directory' ? `${base}${a.compress ? SUFFIX[a.compress] : '.tar'}` : base;
}

/** Content-Disposition with the name percent-encoded (RFC 6266/5987): nothing of it is taken as header syntax. */
function disposition(name: string): string {
  const ascii = name.replace(/[^A-Za-z0-9._-]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

export class ArtifactReader {
  private readonly reads: RowSource;

  constructor(
    reads: RowReader,
    /** Where moved artifacts are (object_store); none configured, a moved one cannot be read. */
    private readonly store: ObjectStore | null = null,
  ) {
    this.reads = { query: (q) => reads.rows(q) };
  }

  async raw(
    req: FastifyRequest,
    reply: FastifyReply,
    _endpoint: Endpoint,
    args: PathArgs,
  ): Promise<FastifyReply> {
    const a = await completeArtifactById(this.reads, Number(args.artifactid));
    if (!a) throw notFound();
    if (a.moved) storeForArtifact(this.store);
    const etag = `"artifact-${a.id}-${a.length}"`;
    const type =
      a.kind === 'directory'
        ? a.compress
          ? TYPES[a.compress]
          : 'application/x-tar'
        : 'application/octet-stream';
    reply
      .header('etag', etag)
      .header('content-type', type)
      .header('content-disposition', disposition(filename(a)))
      .header('content-length', String(a.length));
    if (notModified(req, etag)) return reply.code(304).send();
    if (req.method === 'HEAD') return reply.send();
    return reply.send(Readable.from(this.ranges(a)));
  }

  private async *ranges(a: ArtifactRow): AsyncGenerator<Uint8Array> {
    for (let at = 0; at < a.length; at += RANGE) {
      const data = await readArtifactRange(this.reads, this.store, a.id, at, RANGE);
      if (data.length === 0) return;
      yield data;
    }
  }
}
