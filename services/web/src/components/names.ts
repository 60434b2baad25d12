// Names of builders, workers and masters by id, for pages that list builds: looked up only
// for the ids on screen (`builderid__in`), never by reading a whole collection, and kept for
// the page's life (names change only with the configuration).
import { useEffect, useState } from 'preact/hooks';
import { getPage } from '../api.js';

type Kind = 'builders' | 'workers' | 'masters';
const ID: Record<Kind, string> = { builders: 'builderid', workers: 'workerid', masters: 'masterid' };
const known: Record<Kind, Map<number, string>> = {
  builders: new Map(),
  workers: new Map(),
  masters: new Map(),
};
const pending: Record<Kind, Set<number>> = { builders: new Set(), workers: new Set(), masters: new Set() };
const listeners = new Set<() => void>();

async function fetchNames(kind: Kind, ids: number[]): Promise<void> {
  for (const id of ids) pending[kind].add(id);
  try {
    const page = await getPage<Record<string, unknown>>(kind, kind, {
      [`${ID[kind]}__in`]: ids,
      field: [ID[kind], 'name'],
      limit: ids.length,
    });
    for (const r of page.items) known[kind].set(r[ID[kind]] as number, r.name as string);
  } catch {
    // shown as ids
  } finally {
    for (const id of ids) pending[kind].delete(id);
  }
  for (const fn of listeners) fn();
}

export function useNames(
  kind: Kind,
  ids: readonly (number | null | undefined)[],
): (id: number | null | undefined) => string {
  const [, tick] = useState(0);
  const wanted = [...new Set(ids.filter((i): i is number => typeof i === 'number'))].sort((a, b) => a - b);
  const missing = wanted.filter((id) => !known[kind].has(id) && !pending[kind].has(id));
  useEffect(() => {
    const fn = () => tick((n) => n + 1);
    listeners.add(fn);
    return () => {
      listeners.delete(fn);
    };
  }, []);
  useEffect(() => {
    // Looked at again here: the cards of one list render together, and the first card's
    // effect has asked for the ids they share by the time the next one's runs (the changes
    // page read the same names once per card).
    const ask = missing.filter((id) => !known[kind].has(id) && !pending[kind].has(id));
    if (ask.length) void fetchNames(kind, ask.slice(0, 200));
  }, [kind, missing.join(',')]);
  return (id) => (id === null || id === undefined ? '' : (known[kind].get(id) ?? `#${id}`));
}
