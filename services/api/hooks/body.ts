// Reading a change hook's request: its media type, its text, JSON, and form fields.
// Buildbot (Twisted) reads form fields from the query string and, for a form-encoded or
// multipart body, from the body too (a body field replacing a query field of the same
// name); a field given twice counts once, the first time.
import type { FastifyRequest } from 'fastify';
import { hookInvalid, unsupportedMediaType } from '../errors/catalogue.js';

export const FORM = 'application/x-www-form-urlencoded';
export const MULTIPART = 'multipart/form-data';
export const JSON_TYPE = 'application/json';

/** A body of a media type no dialect reads: 415, naming the type (the answer is text/plain). */
export const unsupportedType = (type: string | undefined) =>
  unsupportedMediaType(`Unknown content type: ${type ?? 'none'}`);

/** The media type of a Content-Type header, lower case, without parameters. */
export function mediaType(header: string | undefined): string | undefined {
  const type = header?.split(';')[0]?.trim().toLowerCase();
  return type ? type : undefined;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function text(body: Buffer): string {
  try {
    return utf8.decode(body);
  } catch {
    throw hookInvalid('the body is not UTF-8 text');
  }
}

export function parseJson(source: string, what: string): unknown {
  try {
    return JSON.parse(source);
  } catch (err) {
    throw hookInvalid(`${what} is not valid JSON: ${(err as Error).message}`);
  }
}

function firstValues(params: Iterable<[string, string]>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of params) if (!out.has(k)) out.set(k, v);
  return out;
}

export function queryFields(url: string): Map<string, string> {
  const q = url.indexOf('?');
  return q < 0 ? new Map() : firstValues(new URLSearchParams(url.slice(q + 1)));
}

/** The fields of a form-encoded or multipart body (file parts as their text). */
export async function formFields(body: Buffer, contentType: string): Promise<Map<string, string>> {
  if (mediaType(contentType) === FORM) return firstValues(new URLSearchParams(text(body)));
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw hookInvalid('the multipart body cannot be read');
  }
  const out = new Map<string, string>();
  for (const [k, v] of form) {
    if (out.has(k)) continue;
    out.set(k, typeof v === 'string' ? v : text(Buffer.from(await v.arrayBuffer())));
  }
  return out;
}

/**
 * A request's fields as Buildbot's request.args holds them: the query's, then a form's or a
 * JSON object's (the base dialect's JSON body).
 */
export async function requestFields(req: FastifyRequest, body: Buffer): Promise<Map<string, unknown>> {
  const fields = new Map<string, unknown>(queryFields(req.url));
  const contentType = req.headers['content-type'];
  const type = mediaType(contentType);
  if (type === FORM || type === MULTIPART) {
    for (const [k, v] of await formFields(body, contentType!)) fields.set(k, v);
  } else if (type === JSON_TYPE) {
    const json = parseJson(text(body), 'the body');
    if (typeof json !== 'object' || json === null || Array.isArray(json))
      throw hookInvalid('the body must be a JSON object');
    for (const [k, v] of Object.entries(json)) fields.set(k, v);
  } else if (body.length > 0) {
    throw unsupportedType(contentType);
  }
  return fields;
}
