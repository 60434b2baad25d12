// The refusals of the change hooks, each with its HTTP status. Buildbot's change_hook answers
// a ValueError with 400 and the error's message as a plain body; we do the same, and use
// 403, 404, 413 and 415 where the fault is the signature, the dialect, the size or the
// content type. Messages may quote what the request sent: they are only ever answered as
// text/plain (index.ts), never as HTML.

export class HookError extends Error {
  override name = 'HookError';
  constructor(
    readonly status: 400 | 403 | 404 | 413 | 415,
    message: string,
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new HookError(400, message);
export const forbidden = (message: string) => new HookError(403, message);
/** A dialect that is not enabled: like any path that names nothing, and naming nothing back. */
export const noDialect = () => new HookError(404, 'not found');
export const unsupportedType = (type: string | undefined) =>
  new HookError(415, `Unknown content type: ${type ?? 'none'}`);
