// AWS Signature Version 4 for S3 requests (AWS's documented algorithm: canonical request,
// string to sign, a signing key derived from the secret by date, region and service). Used
// by the client that signs (client.ts) and by whoever must check a signature the same way
// (the tests' S3 server). test/core/objstore/sigv4.test.ts holds it to AWS's own worked
// example (GET /test.txt with a Range, 2013-05-24), step by step.
import { createHash, createHmac } from 'node:crypto';

export const ALGORITHM = 'AWS4-HMAC-SHA256';
/** The hash of an empty body, which a GET, HEAD or DELETE signs. */
export const EMPTY_SHA256 = createHash('sha256').update('').digest('hex');

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface SignInput {
  method: string;
  /** The request's path, not yet encoded (`/bucket/key with spaces`). */
  path: string;
  /** Query parameters, not yet encoded. */
  query?: Record<string, string>;
  /** Headers to sign (host included); names in any case. */
  headers: Record<string, string>;
  /** Hex SHA-256 of the body (EMPTY_SHA256 for none). */
  payloadHash: string;
  region: string;
  /** `YYYYMMDDTHHMMSSZ` */
  amzDate: string;
  service?: string;
}

export const sha256Hex = (data: string | Uint8Array): string =>
  createHash('sha256').update(data).digest('hex');

const hmac = (key: string | Buffer, data: string): Buffer => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding, as SigV4 wants it: every byte but A-Z a-z 0-9 - _ . ~ escaped. */
export function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** S3's canonical URI: each segment encoded once, the slashes kept. */
export const canonicalPath = (path: string): string => path.split('/').map(uriEncode).join('/');

export function canonicalQuery(query: Record<string, string> = {}): string {
  return Object.entries(query)
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

/** The canonical request and the names of the headers it signs (`host;range;...`). */
export function canonicalRequest(input: SignInput): { request: string; signedHeaders: string } {
  const headers = Object.entries(input.headers)
    .map(([k, v]) => [k.toLowerCase(), v.trim().replace(/\s+/g, ' ')] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const signedHeaders = headers.map(([k]) => k).join(';');
  const request = [
    input.method,
    canonicalPath(input.path),
    canonicalQuery(input.query),
    ...headers.map(([k, v]) => `${k}:${v}`),
    '',
    signedHeaders,
    input.payloadHash,
  ].join('\n');
  return { request, signedHeaders };
}

export const scopeOf = (amzDate: string, region: string, service = 's3'): string =>
  `${amzDate.slice(0, 8)}/${region}/${service}/aws4_request`;

export function stringToSign(input: SignInput): string {
  return [
    ALGORITHM,
    input.amzDate,
    scopeOf(input.amzDate, input.region, input.service),
    sha256Hex(canonicalRequest(input).request),
  ].join('\n');
}

// The signing key changes once a day (it is derived from the date, region and service): kept,
// it spares four HMACs of every request.
let lastKey: { scope: string; secret: string; key: Buffer } | null = null;

function signingKey(secretAccessKey: string, amzDate: string, region: string, service: string): Buffer {
  const scope = `${amzDate.slice(0, 8)}/${region}/${service}`;
  if (lastKey?.scope === scope && lastKey.secret === secretAccessKey) return lastKey.key;
  const date = hmac(`AWS4${secretAccessKey}`, amzDate.slice(0, 8));
  const key = hmac(hmac(hmac(date, region), service), 'aws4_request');
  lastKey = { scope, secret: secretAccessKey, key };
  return key;
}

export function signature(input: SignInput, secretAccessKey: string): string {
  const key = signingKey(secretAccessKey, input.amzDate, input.region, input.service ?? 's3');
  return createHmac('sha256', key).update(stringToSign(input)).digest('hex');
}

/** The Authorization header of a signed request. */
export function authorization(input: SignInput, creds: Credentials): string {
  const { signedHeaders } = canonicalRequest(input);
  const scope = scopeOf(input.amzDate, input.region, input.service);
  return `${ALGORITHM} Credential=${creds.accessKeyId}/${scope},SignedHeaders=${signedHeaders},Signature=${signature(input, creds.secretAccessKey)}`;
}

/** `YYYYMMDDTHHMMSSZ` of a time. */
export const amzDateOf = (d: Date): string =>
  d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
