// Which builders a force starts, as Buildbot's computeBuilderNames works them out: the form's
// builders that `builderNames` asks for; or the one builder `builderid` names, whether or
// not the form lists it; or every builder of the form. The action and its authorization
// both ask here, so that what is allowed is exactly what runs.
import type { ForceScheduler } from './parameters.js';

/**
 * The names (those asked for by name, sorted; the form's, in its order); null when
 * `builderid` names no builder (ids are 32-bit: larger ones name none).
 */
export async function forcedBuilderNames(
  sched: ForceScheduler,
  params: Readonly<Record<string, unknown>>,
  builderName: (id: number) => Promise<string | null>,
): Promise<string[] | null> {
  if (Array.isArray(params.builderNames)) {
    const asked = new Set(params.builderNames.filter((n): n is string => typeof n === 'string'));
    return sched.builderNames.filter((n) => asked.has(n)).sort();
  }
  if (params.builderid !== undefined && params.builderid !== null) {
    const id = Number(params.builderid);
    const name = Number.isInteger(id) && id >= 0 && id < 2 ** 31 ? await builderName(id) : null;
    return name === null ? null : [name];
  }
  return [...sched.builderNames];
}
