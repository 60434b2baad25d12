// A local S3-compatible server for the tests (there is no MinIO here): the subset of S3's
// REST API Flotilla uses (PUT, GET with a byte Range, HEAD, DELETE of one object, and the
// multipart upload: CreateMultipartUpload, UploadPart, CompleteMultipartUpload,
// AbortMultipartUpload), path-style (`/bucket/key`) or virtual-host (`bucket.host/key`), with
// objects in memory, on 127.0.0.1. It enforces the protocol as S3 documents it, so that the
// client is tested against the protocol and not against itself: an object's ETag is the
// quoted MD5 of its bytes, a multipart object's the MD5 of its parts' binary MD5s followed by
// `-<parts>`; nothing is visible under a multipart upload's key until Complete assembles the
// parts it names; Complete refuses parts out of ascending order (InvalidPartOrder), a part not
// uploaded or of another ETag (InvalidPart), a part but the last under 5 MiB (EntityTooSmall),
// and none at all (MalformedXML); an upload id it does not know, or that belongs to another
// key, is NoSuchUpload (404); a part number outside 1..10,000 is InvalidArgument.
// It enforces SigV4 as S3 does: a request without a valid signature by the one configured
// key pair, for this region, dated within 15 minutes, whose x-amz-content-sha256 is not the
// hash of the body it sent, is refused with S3's 403 and error code. The signature is
// recomputed from what arrived on the wire (method, raw path, query, the signed headers'
// values), so a client that signs one thing and sends another is caught.
//
// Test hooks: `hold()` makes PUTs (parts too) wait until released (a move caught mid-upload),
// `refusePart` answers chosen parts with a 500 (a store failing mid-upload), `requests` counts
// what was asked, `objects` is what is stored, `uploads` the multipart uploads still open.
import { createHash } from 'node:crypto';
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
/** S3's smallest part but the last. */
const MIN_PART_BYTES = 5 * 1024 * 1024;
const MAX_PART_NUMBER = 10_000;

const md5 = (b: Uint8Array): Buffer => createHash('md5').update(b).digest();
const quotedMd5 = (b: Uint8Array): string => `"${md5(b).toString('hex')}"`;

interface Upload {
  key: string;
  parts: Map<number, { body: Buffer; etag: string }>;
}

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
  /** The query string, for the multipart calls (`uploads=`, `partNumber=2&uploadId=...`). */
  query?: string;
}

export const TEST_S3_CREDENTIALS: Credentials = {
  accessKeyId: 'FLOTILLATESTKEY',
  secretAccessKey: 'flotilla-test-secret/not-a-real-one',
};

export class S3Server {
  readonly objects = new Map<string, Buffer>();
  readonly etags = new Map<string, string>();
  /** Multipart uploads started and neither completed nor aborted, by upload id. */
  readonly uploads = new Map<string, Upload>();
  /** Parts answered with a 500 InternalError while this says so (by part number). */
  refusePart: ((partNumber: number) => boolean) | null = null;
  private nextUpload = 1;
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
    const query = url.search.slice(1);
    this.requests.push({
      method: req.method ?? '',
      key,
      ...(range ? { range } : {}),
      ...(query ? { query } : {}),
    });
    const uploadId = url.searchParams.get('uploadId');
    switch (req.method) {
      case 'POST':
        if (url.searchParams.has('uploads')) return this.createUpload(res, key);
        if (uploadId !== null) return this.completeUpload(res, key, uploadId, body);
        return this.error(res, 400, 'InvalidRequest');
      case 'PUT': {
        if (this.held) {
          this.waitingPuts++;
          await this.held;
          this.waitingPuts--;
        }
        if (uploadId !== null)
          return this.uploadPart(res, key, uploadId, url.searchParams.get('partNumber'), body);
        this.store(key, body, quotedMd5(body));
        res.writeHead(200, { etag: this.etags.get(key)! });
        return void res.end();
      }
      case 'DELETE':
        if (uploadId !== null) {
          if (!this.uploadOf(key, uploadId)) return this.error(res, 404, 'NoSuchUpload');
          this.uploads.delete(uploadId);
        } else {
          this.objects.delete(key);
          this.etags.delete(key);
        }
        res.writeHead(204);
        return void res.end();
      case 'GET':
      case 'HEAD': {
        const obj = this.objects.get(key);
        if (!obj) return this.error(res, 404, 'NoSuchKey');
        if (!range) {
          res.writeHead(200, { 'content-length': obj.length, etag: this.etags.get(key)! });
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

  private store(key: string, body: Buffer, etag: string): void {
    this.objects.set(key, body);
    this.etags.set(key, etag);
  }

  private uploadOf(key: string, uploadId: string): Upload | undefined {
    const upload = this.uploads.get(uploadId);
    return upload?.key === key ? upload : undefined;
  }

  private createUpload(res: ServerResponse, key: string): void {
    const uploadId = `upload-${this.nextUpload++}-${createHash('sha256').update(key).digest('hex').slice(0, 8)}`;
    this.uploads.set(uploadId, { key, parts: new Map() });
    this.xml(
      res,
      `<InitiateMultipartUploadResult><Bucket>${this.bucket}</Bucket><Key>${key}</Key><UploadId>${uploadId}</UploadId></InitiateMultipartUploadResult>`,
    );
  }

  private uploadPart(
    res: ServerResponse,
    key: string,
    uploadId: string,
    partNumber: string | null,
    body: Buffer,
  ) {
    const n = Number(partNumber);
    if (!Number.isInteger(n) || n < 1 || n > MAX_PART_NUMBER) return this.error(res, 400, 'InvalidArgument');
    const upload = this.uploadOf(key, uploadId);
    if (!upload) return this.error(res, 404, 'NoSuchUpload');
    if (this.refusePart?.(n)) return this.error(res, 500, 'InternalError');
    // A part uploaded again under its number replaces the first.
    const etag = quotedMd5(body);
    upload.parts.set(n, { body, etag });
    res.writeHead(200, { etag });
    res.end();
  }

  private completeUpload(res: ServerResponse, key: string, uploadId: string, body: Buffer) {
    const upload = this.uploadOf(key, uploadId);
    if (!upload) return this.error(res, 404, 'NoSuchUpload');
    const named = [...body.toString('utf8').matchAll(/<Part>([\s\S]*?)<\/Part>/g)].map(([, part]) => ({
      n: Number(/<PartNumber>(\d+)<\/PartNumber>/.exec(part!)?.[1]),
      etag: (/<ETag>([^<]*)<\/ETag>/.exec(part!)?.[1] ?? '').replace(/&quot;/g, '"').replace(/&amp;/g, '&'),
    }));
    if (named.length === 0 || named.some((p) => !Number.isInteger(p.n)))
      return this.error(res, 400, 'MalformedXML');
    if (named.some((p, i) => i > 0 && p.n <= named[i - 1]!.n))
      return this.error(res, 400, 'InvalidPartOrder');
    const parts: Buffer[] = [];
    for (const [i, p] of named.entries()) {
      const held = upload.parts.get(p.n);
      // S3 takes the ETag with or without its quotes.
      if (!held || held.etag.replace(/"/g, '') !== p.etag.replace(/"/g, ''))
        return this.error(res, 400, 'InvalidPart');
      if (i < named.length - 1 && held.body.length < MIN_PART_BYTES)
        return this.error(res, 400, 'EntityTooSmall');
      parts.push(held.body);
    }
    const etag = `"${md5(Buffer.concat(parts.map(md5))).toString('hex')}-${parts.length}"`;
    this.uploads.delete(uploadId);
    this.store(key, Buffer.concat(parts), etag);
    this.xml(
      res,
      `<CompleteMultipartUploadResult><Bucket>${this.bucket}</Bucket><Key>${key}</Key><ETag>${etag}</ETag></CompleteMultipartUploadResult>`,
    );
  }

  private xml(res: ServerResponse, body: string): void {
    res.writeHead(200, { 'content-type': 'application/xml' });
    res.end(`<?xml version="1.0" encoding="UTF-8"?>${body}`);
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
