// Asks a server every golden case and compares each answer (compare.ts). Cases that change
// the data (force, rebuild, cancel, pause) run after all the others, so that none of them
// changes what another case reads; run them again only on a fresh copy of the fixture.
import type { GoldenCase } from '../../helpers/buildbot-recorded.js';
import { differenceOf } from './compare.js';

export interface Replay {
  /** How many cases were asked. */
  ran: number;
  /** One line per failing case: `<id> [<rule>] <METHOD> <path>: <first difference>`. */
  failures: string[];
}

/** `base` is the API's root, `http://127.0.0.1:PORT/api/v2`. */
export async function replayCases(base: string, cases: readonly GoldenCase[]): Promise<Replay> {
  const ordered = [...cases.filter((c) => !c.mutates), ...cases.filter((c) => c.mutates)];
  const failures: string[] = [];
  for (const c of ordered) {
    const difference = await replayCase(base.replace(/\/+$/, ''), c);
    if (difference) failures.push(`${c.id} [${c.rule}] ${c.method} ${c.path || '(root)'}: ${difference}`);
  }
  return { ran: ordered.length, failures };
}

async function replayCase(base: string, c: GoldenCase): Promise<string | null> {
  try {
    const res = await fetch(base + c.path, {
      method: c.method,
      headers: c.headers ?? {},
      // Bytes, not a string: fetch adds no Content-Type of its own, so a case without one
      // asks exactly what was recorded.
      body: c.body === undefined ? undefined : Buffer.from(c.body, 'utf8'),
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    return differenceOf(c, { status: res.status, headers: res.headers, text: await res.text() });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    return `request failed: ${e.cause?.code ?? e.message}`;
  }
}
