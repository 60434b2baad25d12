// Log storage errors: one catalogue, each with a stable code.

export type LogErrorCode =
  /** A `compressed` value (or a method name) that no codec answers to. */
  | 'LOG_CODEC_UNKNOWN'
  /** A codec Flotilla reads (bz2, lz4: Buildbot wrote them) but never writes. */
  | 'LOG_CODEC_READ_ONLY'
  /** Stored bytes that do not decode with the codec their row names. */
  | 'LOG_CODEC_CORRUPT'
  /** Stored bytes that decode (or declare they decode) to more than the allowed size. */
  | 'LOG_CODEC_TOO_LARGE'
  /** Appended text that does not end with a newline. */
  | 'LOG_APPEND_UNTERMINATED'
  /** A chunk whose content holds fewer lines than its first_line..last_line claim. */
  | 'LOG_CHUNK_INCONSISTENT'
  /** Chunk rows out of order or overlapping, or a row's line numbers that are not 0 <= first <= last. */
  | 'LOG_CHUNK_ORDER'
  /** A requested line range that is not whole numbers with 0 <= first <= last. */
  | 'LOG_RANGE_INVALID';

export class LogError extends Error {
  override name = 'LogError';
  constructor(
    readonly code: LogErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
