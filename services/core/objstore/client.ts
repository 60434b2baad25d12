// A small S3 client: PUT, ranged GET and DELETE of one object, and the four calls of a
// multipart upload (create, upload a part, complete, abort: what streamed-put.ts uses for an
// object larger than one part), signed with SigV4 (sigv4.ts), over node:http(s) with
// connections kept open (transport.ts), path-style (`endpoint/bucket/key`, what MinIO and most S3-compatible servers
// want) or virtual-host (`bucket.endpoint/key`, AWS's default).
//
// Why our own and not @aws-sdk/client-s3: we use seven operations; the SDK brings dozens of
// packages (its middleware stack, XML parser, credential chain) to a project that reads its
// credentials from one env variable or file, and its retries would hide what our jobs retry
// themselves (services/master/jobs/move-log.ts). The signing is AWS's documented algorithm,
// checked against AWS's worked example (test/core/objstore/sigv4.test.ts).
//
// Every failure (a refusal, a 5xx, a timeout, a connection refused) is an UnavailableError
// OBJECT_STORE_UNAVAILABLE, with the store's answer in its message but never the credentials;
// a missing object is a NotFoundError.
import { NotFoundError, UnavailableError } from '../errors.js';
import {
  amzDateOf,
  authorization,
  type Credentials,
  canonicalPath,
  canonicalQuery,
  EMPTY_SHA256,
  type SignInput,
  sha256Hex,
} from './sigv4.js';
import { type StoreAnswer, StoreTransport } from './transport.js';

export interface ObjectStoreSettings {
  /** `http://127.0.0.1:9000`, `https://s3.eu-west-1.amazonaws.com` */
  endpoint: string;
  bucket: string;
  region: string;
  /** Put before every key (`flotilla/`); empty for none. */
  prefix: string;
  /** Path-style addressing (default); false: virtual-host. */
  pathStyle: boolean;
  credentials: Credentials;
  /** Per request (default 30 s). */
  timeoutMs?: number;
}

export type ObjectStoreErrorCode = 'OBJECT_STORE_UNAVAILABLE';

/** A part a multipart upload holds: its number (1..10,000) and the ETag the store gave it. */
export interface UploadedPart {
  partNumber: number;
  etag: string;
}

type Method = 'GET' | 'PUT' | 'DELETE' | 'POST';

const DEFAULT_TIMEOUT_MS = 30_000;

export class ObjectStore {
  private readonly base: URL;
  private readonly transport: StoreTransport;
  constructor(private readonly s: ObjectStoreSettings) {
    this.base = new URL(s.endpoint);
    this.transport = new StoreTransport(this.base);
  }

  /** Close the connections kept open to the store. */
  close(): void {
    this.transport.close();
  }

  /** The full key of a name: the prefix and the name. */
  key(name: string): string {
    return `${this.s.prefix}${name}`;
  }

  async put(key: string, body: Uint8Array): Promise<void> {
    await this.send('PUT', key, { body });
  }

  /** The object's bytes, or bytes `start..end` (inclusive) of it. */
  async get(key: string, range?: { start: number; end: number }): Promise<Uint8Array> {
    const headers: Record<string, string> = range ? { range: `bytes=${range.start}-${range.end}` } : {};
    const res = await this.send('GET', key, { headers });
    // A server that ignores Range answers 200 with the whole object: take the slice ourselves.
    if (range && res.status === 200) return res.body.subarray(range.start, range.end + 1);
    return res.body;
  }

  /** Delete one object; deleting one that is not there is not an error (S3's 204 either way). */
  async delete(key: string): Promise<void> {
    try {
      await this.send('DELETE', key, {});
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }

  /** Starts a multipart upload of `key`: its upload id. Nothing is visible under the key yet. */
  async createMultipartUpload(key: string): Promise<string> {
    const res = await this.send('POST', key, { query: { uploads: '' } });
    const id = /<UploadId>([^<]+)<\/UploadId>/.exec(res.body.toString('utf8'))?.[1];
    if (!id) throw this.unavailable('POST', key, 'no UploadId in the answer');
    return id;
  }

  /** Uploads part `partNumber` of an upload: the part's ETag, which completing it names. */
  async uploadPart(key: string, uploadId: string, partNumber: number, body: Uint8Array): Promise<string> {
    const res = await this.send('PUT', key, { body, query: { partNumber: String(partNumber), uploadId } });
    const etag = res.etag;
    if (!etag) throw this.unavailable('PUT', key, `no ETag for part ${partNumber}`);
    return etag;
  }

  /** Assembles the parts (in ascending order) into the object, which appears whole, at once. */
  async completeMultipartUpload(
    key: string,
    uploadId: string,
    parts: readonly UploadedPart[],
  ): Promise<void> {
    const xml = `<CompleteMultipartUpload>${parts
      .map((p) => `<Part><PartNumber>${p.partNumber}</PartNumber><ETag>${escapeXml(p.etag)}</ETag></Part>`)
      .join('')}</CompleteMultipartUpload>`;
    const res = await this.send('POST', key, { body: new TextEncoder().encode(xml), query: { uploadId } });
    // S3 may answer a Complete 200 and still fail it, with an <Error> in the body (it sends
    // the status before it has assembled the parts).
    const text = res.body.toString('utf8');
    const code = /<Error>[\s\S]*?<Code>([^<]*)<\/Code>/.exec(text)?.[1];
    if (code) throw this.unavailable('POST', key, `200 ${code}`);
  }

  /** Discards an upload and the parts it holds; one the store does not know is not an error. */
  async abortMultipartUpload(key: string, uploadId: string): Promise<void> {
    try {
      await this.send('DELETE', key, { query: { uploadId } });
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }

  private url(key: string, query: Record<string, string> | undefined): URL {
    const url = new URL(this.base);
    if (!this.s.pathStyle) url.hostname = `${this.s.bucket}.${url.hostname}`;
    // Encoded exactly as the signature encodes it.
    url.pathname = canonicalPath(this.path(key));
    if (query) url.search = canonicalQuery(query);
    return url;
  }

  private unavailable(method: Method, key: string, what: string): UnavailableError<ObjectStoreErrorCode> {
    return new UnavailableError<ObjectStoreErrorCode>(
      'OBJECT_STORE_UNAVAILABLE',
      `object store ${method} ${key}: ${what}`,
    );
  }

  private path(key: string): string {
    return this.s.pathStyle ? `/${this.s.bucket}/${key}` : `/${key}`;
  }

  private async send(
    method: Method,
    key: string,
    opts: { body?: Uint8Array; headers?: Record<string, string>; query?: Record<string, string> },
  ): Promise<StoreAnswer> {
    const url = this.url(key, opts.query);
    const payloadHash = opts.body ? sha256Hex(opts.body) : EMPTY_SHA256;
    const headers: Record<string, string> = {
      ...opts.headers,
      host: url.host,
      'x-amz-date': amzDateOf(new Date()),
      'x-amz-content-sha256': payloadHash,
    };
    const input: SignInput = {
      method,
      path: this.path(key),
      ...(opts.query ? { query: opts.query } : {}),
      headers,
      payloadHash,
      region: this.s.region,
      amzDate: headers['x-amz-date']!,
    };
    let res: StoreAnswer;
    try {
      res = await this.transport.request({
        method,
        url,
        // The host sent is the one signed.
        headers: { ...headers, authorization: authorization(input, this.s.credentials) },
        ...(opts.body ? { body: opts.body } : {}),
        timeoutMs: this.s.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      });
    } catch (err) {
      throw this.unavailable(method, key, (err as Error).message);
    }
    if (res.status >= 200 && res.status < 300) return res;
    const text = res.body.toString('utf8');
    const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? String(res.status);
    if (res.status === 404) throw new NotFoundError('NOT_FOUND', `object store: no object ${key} (${code})`);
    throw this.unavailable(method, key, `${res.status} ${code}`);
  }
}

// An ETag is quoted (`"9b2c..."`): quotes may stand in XML text, markup may not.
const escapeXml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
