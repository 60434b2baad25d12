// The one error catalogue and what the mapper makes of what is thrown (pure logic; the
// replies themselves are checked end to end in errors.test.ts, security/ and hooks/).
import { describe, expect, it } from 'vitest';
import { CATALOGUE, entryOf, JSONRPC } from '../../../services/api/errors/catalogue.js';
import { knownError } from '../../../services/api/errors/reply.js';
import {
  ConflictError,
  InputError,
  LimitError,
  NotAllowedError,
  NotFoundError,
  NotSupportedError,
  UnavailableError,
} from '../../../services/core/errors.js';

describe('the catalogue', () => {
  it('gives every code an HTTP error status, and JSON-RPC codes only from the JSON-RPC range', () => {
    for (const [code, e] of Object.entries(CATALOGUE)) {
      expect(e.status, code).toBeGreaterThanOrEqual(400);
      expect(e.status, code).toBeLessThan(600);
      if (typeof e.rpc === 'number') expect(Object.values(JSONRPC), code).toContain(e.rpc);
    }
  });

  it('answers a code it does not list by the kind of its error', () => {
    const status = (e: Parameters<typeof entryOf>[0]) => entryOf(e).status;
    expect(status(new InputError('SOMETHING_NEW', 'x'))).toBe(400);
    expect(status(new NotFoundError('SOMETHING_NEW', 'x'))).toBe(404);
    expect(status(new ConflictError('SOMETHING_NEW', 'x'))).toBe(409);
    expect(status(new NotAllowedError('SOMETHING_NEW', 'x'))).toBe(403);
    expect(status(new NotSupportedError('SOMETHING_NEW', 'x'))).toBe(501);
    expect(status(new LimitError('SOMETHING_NEW', 'x'))).toBe(429);
    expect(status(new UnavailableError('SOMETHING_NEW', 'x'))).toBe(503);
  });

  it('keeps the codes of core, so callers that test err.code still match', () => {
    expect(entryOf(new ConflictError('DUPLICATE_LOG', 'x')).status).toBe(409);
    expect(entryOf(new InputError('INVALID', 'x'))).toEqual({ status: 400, rpc: JSONRPC.invalidParams });
  });
});

describe('knownError', () => {
  it('keeps our errors as they are', () => {
    const e = new InputError('INVALID_QUERY', 'no such field');
    expect(knownError(e)).toBe(e);
  });

  it.each([
    [400, 'BAD_REQUEST', 'bad request'],
    [404, 'NOT_FOUND', 'not found'],
    [408, 'REQUEST_TIMEOUT', 'request timeout'],
    [413, 'BODY_TOO_LARGE', 'request body too large'],
    [414, 'URI_TOO_LONG', 'request URI too long'],
    [415, 'UNSUPPORTED_MEDIA_TYPE', 'unsupported media type'],
    [405, 'BAD_REQUEST', 'bad request'],
  ])("turns a framework's %i into %s, never with the framework's own words", (statusCode, code, message) => {
    const err = Object.assign(new Error('FST_ERR_SOMETHING: internals here'), { statusCode });
    expect(knownError(err)).toMatchObject({ code, message });
  });

  it('leaves anything else unknown: a 500, and nothing of it told', () => {
    expect(knownError(new Error('boom'))).toBeNull();
    expect(knownError(Object.assign(new Error('x'), { statusCode: 502 }))).toBeNull();
    expect(knownError('a string')).toBeNull();
    expect(knownError(null)).toBeNull();
  });
});
