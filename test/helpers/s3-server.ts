// A local S3-compatible server for the tests (there is no MinIO here): the subset of S3's
// REST API Flotilla uses (PUT, GET with a byte Range, HEAD, DELETE of one object), path-style
// (`/bucket/key`) or virtual-host (`bucket.host/key`), with objects in memory, on 127.0.0.1.
// It enforces SigV4 as S3 does: a request without a valid signature by the one configured
// key pair, for this region, dated within 15 minutes, whose x-amz-content-sha256 is not the
// hash of the body it sent, is refused with S3's 403 and error code. The signature is
// recomputed from what arrived on the wire (method, raw path, query, the signed headers'
// values), so a client that signs one thing and sends another is caught.
//
// Test hooks: `hold()` makes PUTs wait until released (a move caught mid-upload), `requests`
// counts what was asked, `objects` is what is stored.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ObjectStore } from '../../services/core/objstore/client.js';
import {
  type Credentials,
  canonicalPath,
  type SignInput,
  sha256Hex,
  signature,
} from '../../services/core/objstore/sigv4.js';

const MAX_SKEW_MS = 15 * 60 * 1000;

export interface S3ServerOptions {
  bucket: string;
  region?: string;
  credentials?: Credentials;
  /** A fixed port, for a configuration written before the server starts (default: any free). */
  port?: number;
}

export interface S3Request {
  method: string;
  key: string;
  range?: string;
}

export const TEST_S3_CREDENTIALS: Credentials = {
  accessKeyId: 'FLOTILLATESTKEY',
  secretAccessKey: 'flotilla-test-secret/not-a-real-one',
};

export class S3Server {
  readonly objects = new Map<string, Buffer>();
  readonly requests: S3Request[] = [];
  readonly refused: string[] = [];
  private held: Promise<void> | null = null;
  private release: (() => void) | null = null;
  private waitingPuts = 0;
  readonly region: string;
  readonly credentials: Credentials;

  private constructor(
    private readonly server: Server,
    readonly bucket: string,
    opts: S3ServerOptions,
  ) {
    this.region = opts.region ?? 'us-east-1';
    this.credentials = opts.credentials ?? TEST_S3_CREDENTIALS;
  }

  static async start(opts: S3ServerOptions): Promise<S3Server> {
    let self!: S3Server;
    const server = createServer((req, res) => {
      self.handle(req, res).catch((err) => {
        res.statusCode = 500;
        res.end(String(err));
      });
    });
    self = new S3Server(server, opts.bucket, opts);
    await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
    return self;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** A client of this server's bucket, path-style, signing with its key pair. */
  client(prefix = ''): ObjectStore {
    return new ObjectStore({
      endpoint: this.endpoint,
      bucket: this.bucket,
      region: this.region,
      prefix,
      pathStyle: true,
      credentials: this.credentials,
    });
  }

  /** PUTs wait from now until the returned function is called. */
  hold(): () => void {
    this.held = new Promise((resolve) => {
      this.release = resolve;
    });
    return () => {
      this.held = null;
      this.release?.();
    };
  }

  /** PUTs waiting in hold(). */
  get putsWaiting(): number {
    return this.waitingPuts;
  }

  async close(): Promise<void> {
    this.release?.();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://x');
    const denied = this.checkSignature(req, url, body);
    if (denied) {
      this.refused.push(denied);
      return this.error(res, 403, denied);
    }
    const located = this.locate(req, url);
    if (!located) return this.error(res, 404, 'NoSuchBucket');
    const { key } = located;
    const range = req.headers.range;
    this.requests.push({ method: req.method ?? '', key, ...(range ? { range } : {}) });
    switch (req.method) {
      case 'PUT': {
        if (this.held) {
          this.waitingPuts++;
          await this.held;
          this.waitingPuts--;
        }
        this.objects.set(key, body);
        res.writeHead(200, { etag: `"${sha256Hex(body).slice(0, 32)}"` });
        return void res.end();
      }
      case 'DELETE':
        this.objects.delete(key);
        res.writeHead(204);
        return void res.end();
      case 'GET':
      case 'HEAD': {
        const obj = this.objects.get(key);
        if (!obj) return this.error(res, 404, 'NoSuchKey');
        if (!range) {
          res.writeHead(200, { 'content-length': obj.length });
          return void res.end(req.method === 'HEAD' ? undefined : obj);
        }
        const m = /^bytes=(\d+)-(\d*)$/.exec(range);
        if (!m) return this.error(res, 400, 'InvalidArgument');
        const start = Number(m[1]);
        const end = Math.min(m[2] ? Number(m[2]) : obj.length - 1, obj.length - 1);
        if (start >= obj.length || start > end) return this.error(res, 416, 'InvalidRange');
        res.writeHead(206, {
          'content-length': end - start + 1,
          'content-range': `bytes ${start}-${end}/${obj.length}`,
        });
        return void res.end(req.method === 'HEAD' ? undefined : obj.subarray(start, end + 1));
      }
      default:
        return this.error(res, 405, 'MethodNotAllowed');
    }
  }

  /** The bucket and key of a request, path-style or virtual-host; null for another bucket. */
  private locate(req: IncomingMessage, url: URL): { key: string } | null {
    const path = decodeURIComponent(url.pathname);
    const host = (req.headers.host ?? '').split(':')[0]!;
    if (host.startsWith(`${this.bucket}.`)) return { key: path.slice(1) };
    const [, bucket, ...rest] = path.split('/');
    return bucket === this.bucket ? { key: rest.join('/') } : null;
  }

  /** S3's error code for a request whose signature does not hold, or null when it does. */
  private checkSignature(req: IncomingMessage, url: URL, body: Buffer): string | null {
    const auth = req.headers.authorization ?? '';
    const m =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/.exec(
        auth,
      );
    if (!m) return 'AccessDenied';
    const [, keyId, date, region, signed, sig] = m;
    if (keyId !== this.credentials.accessKeyId) return 'InvalidAccessKeyId';
    if (region !== this.region) return 'AuthorizationHeaderMalformed';
    const amzDate = String(req.headers['x-amz-date'] ?? '');
    const at = Date.parse(
      amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'),
    );
    if (!amzDate.startsWith(date!) || Number.isNaN(at) || Math.abs(Date.now() - at) > MAX_SKEW_MS)
      return 'RequestTimeTooSkewed';
    const payloadHash = String(req.headers['x-amz-content-sha256'] ?? '');
    if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== sha256Hex(body))
      return 'XAmzContentSHA256Mismatch';
    const names = signed!.split(';');
    for (const required of ['host', 'x-amz-date', 'x-amz-content-sha256'])
      if (!names.includes(required)) return 'AccessDenied';
    if (req.headers.range !== undefined && !names.includes('range')) return 'AccessDenied';
    const headers: Record<string, string> = {};
    for (const n of names) {
      const v = req.headers[n];
      if (v === undefined) return 'AccessDenied';
      headers[n] = Array.isArray(v) ? v.join(',') : v;
    }
    const query: Record<string, string> = {};
    for (const [k, v] of url.searchParams) query[k] = v;
    const input: SignInput = {
      method: req.method ?? '',
      path: decodeURIComponent(url.pathname),
      query,
      headers,
      payloadHash,
      region: region!,
      amzDate,
    };
    // The path as sent must be the canonical encoding of itself (S3 encodes once, so a
    // client that sent `%2F` where it signed `/` does not pass).
    if (canonicalPath(input.path) !== url.pathname) return 'SignatureDoesNotMatch';
    return signature(input, this.credentials.secretAccessKey) === sig ? null : 'SignatureDoesNotMatch';
  }

  private error(res: ServerResponse, status: number, code: string): void {
    res.writeHead(status, { 'content-type': 'application/xml' });
    res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code></Error>`);
  }
}
