// The hostile pieces both fuzzers build requests from, kept once: garbage.fuzz.test.ts
// (in process, fast-check) and security/fuzz-requests.ts (the seeded generator of the fuzz
// test that runs the API as a process). A piece found worth trying by one is tried by both.
import { SINGULAR_OPERATORS } from '../../../services/api/query/spec.js';
import { oracleRegistry } from './harness.js';
import { TRICKY_NUMBERS } from './tricky-numbers.js';

const registry = oracleRegistry();

/** Every path pattern of the registry (`/builders/:builderid/builds`...). */
export const PATTERNS = registry.endpoints.map((e) => e.pattern);
/** Every field name of any resource. */
export const FIELD_NAMES = [
  ...new Set(registry.endpoints.flatMap((e) => e.resource.fields.map((f) => f.name))),
];
/** The fixed words of the patterns (`builders`, `builds`, `steps`...). */
export const WORDS = [...new Set(PATTERNS.flatMap((p) => p.split('/')).filter((s) => s && !s.includes(':')))];
export const NUMBERS = TRICKY_NUMBERS;
/** Names of the fixture's (and the review configuration's) things, and near misses. */
export const NAMES = [
  'runtests',
  'deploy',
  'flaky',
  'report',
  'stdio',
  'summary',
  'worker1',
  'coverage',
  'force-flaky',
  'force-runtests',
  'nosuch',
  'a.b',
  '-x',
  '_',
];
/** Percent-encodings a decoder must refuse (or that decode to what no name holds). */
export const BAD_PERCENT = [
  '%',
  '%z',
  '%zz',
  '%E9',
  '%C3',
  '%ED%A0%80',
  '%FF%FE',
  '%C0%80',
  '%%',
  '%2',
  '%u0041',
  '%00',
  '%0A',
  '%0D%0A',
];
/** Percent-encodings that decode, to characters a path or a value rarely holds. */
export const GOOD_PERCENT = [
  '%00',
  '%2F',
  '%25',
  '%20',
  '%2B',
  '%3F',
  '%23',
  '%C3%A9',
  '%F0%9F%92%A9',
  '%0A',
  '%7F',
];
/** Filter operators: the real ones, and invented or misspelt ones. */
export const OPS = [...SINGULAR_OPERATORS, 'in', 'notin', 'like', 'foo', '', 'EQ', '__eq', 'eq__'];
