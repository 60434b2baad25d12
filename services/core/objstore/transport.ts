// How the S3 client (client.ts) sends a request: node:http(s) through an agent of its own that
// keeps connections open (last used first), the whole answer read into one buffer.
//
// Why not fetch, which client.ts used first: a range read of a moved log is one GET of a few
// KiB, and on that size fetch's own machinery (WHATWG streams, Headers, Response, undici's
// dispatcher) costs more than the request itself. Measured with
// `node --import tsx load/bench/object-store/get.ts` (signed ranged GETs of 10 KiB, one at a
// time, from the bench's S3 server in its own process, three rounds of 2,000 alternating, on
// the shared 2-core machine; both keep connections open): fetch 1.51 / 0.58 / 0.58 ms a GET,
// this transport 0.63 / 0.39 / 0.50 at load average 15; at load 27, fetch 2.62 / 1.71 / 0.91,
// this transport 1.57 / 0.67 / 0.53. A first range read of a moved log pays one such GET
// where its read from PostgreSQL pays a query: this hop is where a part of its time went.
//
// A kept connection the store closed while it was idle (S3 closes idle connections after a
// few seconds) fails the next request sent on it with ECONNRESET or EPIPE before any answer:
// such a request is sent once more on a new connection (every S3 request we send is
// idempotent: PUT of a key named by its bytes' hash, ranged GET, DELETE, a part's PUT, a
// Complete of the same parts; but for a CreateMultipartUpload, whose second sending may leave
// an empty upload nobody completes: the bucket's rule for incomplete uploads ends it, see
// docs/object-store.md). Node's documented remedy (`request.reusedSocket`).
import type { Agent as HttpAgent, IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { http } from '../http/node-http.js';

export interface StoreRequest {
  method: 'GET' | 'PUT' | 'DELETE' | 'POST';
  url: URL;
  headers: Record<string, string>;
  body?: Uint8Array;
  timeoutMs: number;
}

export interface StoreAnswer {
  status: number;
  body: Buffer;
  /** The ETag header, if any (a multipart upload's part names it on Complete). */
  etag?: string;
}

// Connections a store keeps open when idle: a pod's concurrent range reads, not more.
const MAX_FREE_SOCKETS = 16;

export class StoreTransport {
  private readonly agent: HttpAgent;
  private readonly send: typeof http.request;

  constructor(endpoint: URL) {
    const options = { keepAlive: true, maxFreeSockets: MAX_FREE_SOCKETS, scheduling: 'lifo' as const };
    const https = endpoint.protocol === 'https:';
    this.agent = https ? new HttpsAgent(options) : new http.Agent(options);
    this.send = https ? httpsRequest : http.request;
  }

  async request(r: StoreRequest): Promise<StoreAnswer> {
    try {
      return await this.once(r);
    } catch (err) {
      if (!(err instanceof StaleConnection)) throw err;
      return this.once(r);
    }
  }

  /** Connections kept open are closed (a test's end, a process stopping). */
  close(): void {
    this.agent.destroy();
  }

  private once(r: StoreRequest): Promise<StoreAnswer> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { ...r.headers };
      if (r.body) headers['content-length'] = r.body.length;
      const req = this.send(r.url, {
        method: r.method,
        headers,
        agent: this.agent,
        signal: AbortSignal.timeout(r.timeoutMs),
      });
      req.once('error', (err: NodeJS.ErrnoException) => {
        const stale = req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
        reject(stale ? new StaleConnection(err.message) : err);
      });
      req.once('response', (res: IncomingMessage) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.once('error', reject);
        res.once('end', () => {
          const etag = res.headers.etag;
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts), ...(etag ? { etag } : {}) });
        });
      });
      req.end(r.body);
    });
  }
}

/** A kept connection the store had closed: the request was not answered, and may be sent again. */
class StaleConnection extends Error {
  override name = 'StaleConnection';
}
