// The errors of Flotilla's Perspective Broker layers, each with a stable code, defined once.
// Twisted raises `BananaError` for a stream it refuses and then drops the connection
// (twisted/spread/banana.py, `dataReceived`); jelly raises `InsecureJelly` for a type it was not
// told to trust (twisted/spread/jelly.py). Flotilla does the same with typed values: the
// connection that produced one is closed, and the code goes into the master's log line.

export const PB_ERRORS = {
  PB_BANANA_PREFIX_TOO_LONG: 'more than the allowed bytes of banana prefix',
  PB_BANANA_STRING_TOO_LONG: 'banana string longer than the limit',
  PB_BANANA_LIST_TOO_LONG: 'banana list longer than the limit',
  PB_BANANA_TOO_DEEP: 'banana lists nested deeper than the limit',
  PB_BANANA_EXPRESSION_TOO_LARGE: 'one banana expression larger than the limit',
  PB_BANANA_BAD_TYPE_BYTE: 'unknown banana type byte',
  PB_BANANA_BAD_VOCAB: 'unknown or out-of-dialect banana vocabulary symbol',
  PB_BANANA_UNENCODABLE: 'value banana cannot send',
  PB_JELLY_UNKNOWN_TYPE: 'jelly type not in the subset Buildbot exchanges',
  PB_JELLY_MALFORMED: 'jelly expression of the wrong shape',
  PB_BROKER_DIALECT: 'banana dialect other than pb',
  PB_BROKER_VERSION: 'PB protocol version other than 6',
  PB_BROKER_MALFORMED: 'broker message of the wrong shape',
  PB_BROKER_UNKNOWN_ANSWER: 'answer or error to no pending call',
  PB_BROKER_UNKNOWN_OBJECT: 'reference to an object this side does not hold',
  PB_BROKER_TOO_MANY_REFS: 'more references than the broker keeps',
  PB_CONNECTION_LOST: 'the PB connection was lost',
  PB_ACCOUNT_TAKEN: 'a PB username registered twice on one port',
} as const;

export type PbErrorCode = keyof typeof PB_ERRORS;

/** A refusal by one of the PB layers; `code` is stable, `message` says what was seen. */
export class PbProtocolError extends Error {
  override readonly name = 'PbProtocolError';
  constructor(
    readonly code: PbErrorCode,
    detail?: string,
  ) {
    super(detail === undefined ? PB_ERRORS[code] : `${PB_ERRORS[code]}: ${detail}`);
  }
}
