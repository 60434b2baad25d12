// Which builders a force starts: the scheduler's builders that `builderNames` asks for; or
// the one builder `builderid` names; or, with neither, every builder of the scheduler. The
// action and its authorization both ask here, so that what is allowed is exactly what runs.
//
// Where we differ from Buildbot's computeBuilderNames: it drops requested names the
// scheduler does not list and starts whatever builder `builderid` names, listed or not (so
// a force scheduler could start any builder). Here a scheduler only ever starts its own
// builders, and asking for any other (or for none, or in a shape that is not a list of
// names or an id) is refused, naming the parameter (docs/security.md).
import { isId } from '../identifiers.js';
import type { ForceScheduler } from './parameters.js';

export type ForcedBuilders =
  | { ok: true; names: string[] }
  | { ok: false; param: 'builderNames' | 'builderid'; message: string };

/** A value the client sent, quoted short enough for a message. */
const quote = (v: unknown) => {
  const q = JSON.stringify(v) ?? String(v);
  return q.length > 100 ? `${q.slice(0, 100)}...` : q;
};

const refuse = (param: 'builderNames' | 'builderid', message: string): ForcedBuilders => ({
  ok: false,
  param,
  message,
});

/** The names (sorted when asked for by name; the scheduler's order otherwise), or why not. */
export async function forcedBuilders(
  sched: ForceScheduler,
  params: Readonly<Record<string, unknown>>,
  builderName: (id: number) => Promise<string | null>,
): Promise<ForcedBuilders> {
  const own = new Set(sched.builderNames);
  const asked = params.builderNames;
  if (asked !== undefined && asked !== null) {
    if (!Array.isArray(asked) || asked.length === 0 || asked.some((n) => typeof n !== 'string'))
      return refuse('builderNames', 'expected a non-empty list of builder names');
    const foreign = asked.filter((n) => !own.has(n));
    if (foreign.length)
      return refuse('builderNames', `not a builder of this scheduler: ${quote(foreign[0])}`);
    return { ok: true, names: [...new Set(asked as string[])].sort() };
  }
  const idParam = params.builderid;
  if (idParam !== undefined && idParam !== null) {
    const id = typeof idParam === 'number' || typeof idParam === 'string' ? Number(idParam) : Number.NaN;
    // Ids are 32-bit: larger ones name no builder.
    const name = isId(id) ? await builderName(id) : null;
    if (name === null || !own.has(name))
      return refuse('builderid', `not the id of a builder of this scheduler: ${quote(idParam)}`);
    return { ok: true, names: [name] };
  }
  return { ok: true, names: [...sched.builderNames] };
}
