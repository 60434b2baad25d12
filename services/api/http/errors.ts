// Every error the API answers, in one place: a stable code, the HTTP status, and the
// message (Buildbot's own text wherever Buildbot has one).

export type ApiErrorCode =
  | 'NOT_FOUND'
  | 'BAD_QUERY'
  | 'BAD_METHOD'
  | 'BAD_ORIGIN'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
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
