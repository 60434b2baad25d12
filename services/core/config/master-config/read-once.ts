// A schema that validates each distinct value once per parse: a second value equal to one
// already read (as JSON text) gets a copy of the first one's result. A large configuration
// repeats itself (a generated fleet gives a thousand builders the same steps), and zod reads
// every key of every step's schema, present or not (25 for a shell step).
//
// Measured (2026-11-29 04:27-04:28, load 6-15, a fresh process each, before and after in turn,
// before being the previous commit's services/ unpacked under .data with `git archive`):
//   RUNS=1 node_modules/.bin/node --import tsx load/fleet/config-cpu.ts
// the fleet's configuration (1,000 builders with the same one step, 174 KB) parsed cold in
// 146-178 ms of CPU before, 94-130 ms after (eleven pairs, six with structuredClone copies).
// With each step's command made distinct (`true 0`, `true 1`, ...: nothing repeats, so this is
// the cost of looking), 162-195 ms before, 165-185 ms after (five pairs). A value's copy is its
// JSON text read again: structuredClone cost 10 ms more over the thousand distinct steps.
// In a whole start the 50 ms is inside the runs' spread (load/results/fleet.md, 04:16-04:40).
//
// Only what cannot be told apart by its JSON text is shared: a value (in or out) holding
// anything but strings, finite numbers, booleans, null, arrays and plain objects (a Date, NaN,
// -0) is read by the schema as it is every time. Only a value read without any issue is kept,
// so every bad copy is reported at its own path. The memory is per parse (its context), so a
// reload reads everything again.
import { type ParseInput, type ParseReturnType, ZodType, type ZodTypeAny } from 'zod';

function plain(v: unknown): boolean {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v) && !Object.is(v, -0);
  if (Array.isArray(v)) return v.every(plain);
  if (typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && Object.values(v).every(plain);
}

type Parsed = ParseReturnType<unknown>;
// Keyed by the parse's shared context (zod's ctx.common), one map per schema.
type Seen = WeakMap<object, Map<string, string>>;

/**
 * `inner`, reading each distinct value once per parse. It keeps inner's definition, so what
 * walks a schema (test/chart/lib/zod-paths.ts) sees inner.
 */
export class ReadOnce<T extends ZodTypeAny> extends ZodType<T['_output'], T['_def'], T['_input']> {
  readonly #inner: T;
  readonly #seen: Seen = new WeakMap();

  constructor(inner: T) {
    super(inner._def);
    this.#inner = inner;
  }

  _parse(input: ParseInput): Parsed {
    const common = input.parent.common as object;
    if (input.parent.common.async || !plain(input.data)) return this.#inner._parse(input);
    const key = JSON.stringify(input.data);
    let read = this.#seen.get(common);
    if (!read) {
      read = new Map();
      this.#seen.set(common, read);
    }
    const text = read.get(key);
    if (text !== undefined) return { status: 'valid', value: JSON.parse(text) };
    const issues = input.parent.common.issues.length;
    const result = this.#inner._parse(input) as Parsed;
    if (
      !(result instanceof Promise) &&
      result.status === 'valid' &&
      input.parent.common.issues.length === issues &&
      plain(result.value)
    )
      read.set(key, JSON.stringify(result.value));
    return result;
  }
}
