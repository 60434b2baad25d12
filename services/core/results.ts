// Buildbot's result codes and how they combine (worst first).

export const Results = {
  SUCCESS: 0,
  WARNINGS: 1,
  FAILURE: 2,
  SKIPPED: 3,
  EXCEPTION: 4,
  RETRY: 5,
  CANCELLED: 6,
} as const;

export type Result = (typeof Results)[keyof typeof Results];

export const RESULT_NAMES = [
  'success',
  'warnings',
  'failure',
  'skipped',
  'exception',
  'retry',
  'cancelled',
] as const;

// From least to most severe: SKIPPED < SUCCESS < WARNINGS < FAILURE < EXCEPTION < RETRY < CANCELLED.
const SEVERITY = [
  Results.SKIPPED,
  Results.SUCCESS,
  Results.WARNINGS,
  Results.FAILURE,
  Results.EXCEPTION,
  Results.RETRY,
  Results.CANCELLED,
];

/** The worse of two results; an unknown code (such as -1, not finished) loses to any known one. */
export function worst(a: number, b: number): number {
  const ra = SEVERITY.indexOf(a as Result);
  const rb = SEVERITY.indexOf(b as Result);
  return ra >= rb ? a : b;
}
