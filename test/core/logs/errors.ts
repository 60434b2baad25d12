// What a call throws, as a stable error code (or a description of an untyped failure).
import { LogError, type LogErrorCode } from '../../../services/core/logs/errors.js';

export function errorCode(fn: () => unknown): LogErrorCode | string {
  try {
    fn();
  } catch (err) {
    return err instanceof LogError ? err.code : `untyped ${(err as Error).name}: ${(err as Error).message}`;
  }
  return 'no error';
}
