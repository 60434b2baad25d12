// Errors are values: a kind (what sort of fault it is), a stable code (which fault exactly,
// for callers that handle it and for logs) and a message for people. Core and the services
// throw them without knowing how they reach anyone; the API turns them into replies in one
// place (services/api/errors/), which is the only code that knows HTTP statuses and JSON-RPC
// codes. The shape follows Backstage's errors package: a data layer that throws "400" knows
// too much, one that throws an InputError does not.
//
// An error of these kinds is an expected outcome; anything else that is thrown is a bug or
// an outage, and reaches a client only as "internal error".

export type ErrorKind =
  /** What was asked is malformed or breaks a rule (a bad filter, a name too long). */
  | 'invalid-input'
  /** What was named does not exist. */
  | 'not-found'
  /** The state of things does not allow it now (a finished log, a claim lost under a lock). */
  | 'conflict'
  /** This user may not do it. */
  | 'forbidden'
  /** Nothing here does it (an action a resource does not have, a login that is not set up). */
  | 'not-supported'
  /** A size, count or time limit was exceeded. */
  | 'limit'
  /** Something it depends on is away for a moment: try again later. */
  | 'unavailable';

/** The codes core itself throws; the API adds its own (services/api/errors/catalogue.ts). */
export type CoreErrorCode =
  | 'NOT_FOUND'
  | 'INVALID'
  | 'NOT_CLAIMED'
  | 'DUPLICATE_LOG'
  | 'BAD_LOG_TEXT'
  | 'LOG_FINISHED'
  | 'LOG_NOT_FINISHED'
  /** PostgreSQL is away (restarting, failing over): core/db/outage.ts. */
  | 'DATABASE_UNAVAILABLE'
  /** The object store holding finished logs and artifacts is away or failing: core/objstore. */
  | 'OBJECT_STORE_UNAVAILABLE';

export abstract class FlotillaError<C extends string = string> extends Error {
  abstract readonly kind: ErrorKind;
  constructor(
    readonly code: C,
    message: string,
    /** Per-field messages, for input with several named parts (JSON-RPC params, a form). */
    readonly fields?: Readonly<Record<string, string>>,
  ) {
    super(message);
  }
}

export class InputError<C extends string = string> extends FlotillaError<C> {
  override name = 'InputError';
  readonly kind = 'invalid-input';
}

export class NotFoundError<C extends string = string> extends FlotillaError<C> {
  override name = 'NotFoundError';
  readonly kind = 'not-found';
}

export class ConflictError<C extends string = string> extends FlotillaError<C> {
  override name = 'ConflictError';
  readonly kind = 'conflict';
}

export class NotAllowedError<C extends string = string> extends FlotillaError<C> {
  override name = 'NotAllowedError';
  readonly kind = 'forbidden';
}

export class NotSupportedError<C extends string = string> extends FlotillaError<C> {
  override name = 'NotSupportedError';
  readonly kind = 'not-supported';
}

export class LimitError<C extends string = string> extends FlotillaError<C> {
  override name = 'LimitError';
  readonly kind = 'limit';
}

export class UnavailableError<C extends string = string> extends FlotillaError<C> {
  override name = 'UnavailableError';
  readonly kind = 'unavailable';
}

/** The common case: a thing named by id that does not exist ("no build 12"). */
export const noSuch = (what: string): NotFoundError<'NOT_FOUND'> =>
  new NotFoundError('NOT_FOUND', `no ${what}`);

/** A value that breaks a rule of the data (a name too long, an unknown log type). */
export const invalid = (message: string): InputError<'INVALID'> => new InputError('INVALID', message);
