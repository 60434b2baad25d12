// Every error the API answers, in one place: a stable code, the HTTP status, and the
// message (Buildbot's own text wherever Buildbot has one).

export type ApiErrorCode =
  | 'NOT_FOUND'
  | 'BAD_QUERY'
  | 'BAD_METHOD'
  | 'BAD_ORIGIN'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'FORBIDDEN'
  | 'TOO_MANY_REQUESTS'
  | 'URI_TOO_LONG'
  | 'HEADERS_TOO_LARGE'
  | 'NOT_IMPLEMENTED'
  | 'UNAVAILABLE'
  | 'INTERNAL';

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly code: ApiErrorCode,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const notFound = () => new ApiError('NOT_FOUND', 404, 'not found');
export const badQuery = (message: string) => new ApiError('BAD_QUERY', 400, message);
export const badMethod = () => new ApiError('BAD_METHOD', 400, 'invalid HTTP method');
export const badOrigin = () => new ApiError('BAD_ORIGIN', 400, 'invalid origin');
export const internal = () => new ApiError('INTERNAL', 500, 'internal error');
export const badPreflight = () => new ApiError('BAD_METHOD', 400, 'invalid method');
/** Buildbot's authz refusal: 403 with the rule's message ("you need to have role 'x'"). */
export const forbidden = (message: string) => new ApiError('FORBIDDEN', 403, message);
export const tooManyRequests = () => new ApiError('TOO_MANY_REQUESTS', 429, 'too many requests');
export const tooManyLogins = () =>
  new ApiError('TOO_MANY_REQUESTS', 429, 'too many failed logins: try again later');
export const uriTooLong = () => new ApiError('URI_TOO_LONG', 414, 'request URI too long');
export const bodyTooLarge = () => new ApiError('PAYLOAD_TOO_LARGE', 413, 'request body too large');
export const headersTooLarge = () =>
  new ApiError('HEADERS_TOO_LARGE', 431, 'request header fields too large');
export const missingContentType = () =>
  new ApiError('UNSUPPORTED_MEDIA_TYPE', 415, 'a JSON-RPC call needs Content-Type: application/json');
export const noLogin = () => new ApiError('NOT_IMPLEMENTED', 501, 'no login is configured');
export const noTokenLogin = () => new ApiError('BAD_QUERY', 400, 'token login is not configured');
export const loginUnavailable = () =>
  new ApiError('UNAVAILABLE', 503, 'login is unavailable for a moment: try again later');
