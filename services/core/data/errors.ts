// Errors of the data operations: expected outcomes a caller handles, each with a stable code.

export type DataErrorCode =
  | 'NOT_FOUND'
  | 'ALREADY_CLAIMED'
  | 'NOT_CLAIMED'
  | 'ALREADY_COMPLETE'
  | 'DUPLICATE_LOG'
  | 'BAD_LOG_TEXT'
  | 'LOG_FINISHED'
  | 'LOG_NOT_FINISHED'
  | 'INVALID';

export class DataError extends Error {
  override name = 'DataError';
  constructor(
    readonly code: DataErrorCode,
    message: string,
  ) {
    super(message);
  }
}
