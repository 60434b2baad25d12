// Answers the differential run found in agreement with Buildbot 3.7, kept one per line in
// answers.jsonl so that npm test can ask them again without a Buildbot (replay.test.ts). A
// body is kept as a digest of its canonical form: keys sorted, `last_active` blanked, the
// workers' master and builder lists and (for a list without order, limit or offset) the
// resources themselves as multisets, since neither server promises an order there.
import { createHash } from 'node:crypto';
import { type Answer, canon } from './judge.js';

export interface Recorded {
  method: string;
  /** Relative to /api/v2, with its query string. */
  path: string;
  headers: Record<string, string>;
  body?: string;
  status: number;
  type: string;
  disposition?: string;
  digest: string;
}

function canonicalBody(path: string, a: Answer): string {
  let body: unknown;
  try {
    body = JSON.parse(a.text);
  } catch {
    return a.text;
  }
  const unordered = !/[?&](order|limit|offset)=/.test(path);
  if (unordered && body && typeof body === 'object' && !Array.isArray(body) && 'meta' in body) {
    const o = body as Record<string, unknown>;
    const plural = Object.keys(o).find((k) => k !== 'meta');
    if (plural && Array.isArray(o[plural])) {
      const items = (o[plural] as unknown[]).map((x) => canon(x)).sort();
      return `${canon(o.meta)}|${plural}|${items.join('\n')}`;
    }
  }
  return canon(body);
}

export function digestOf(path: string, a: Answer): string {
  return createHash('sha256').update(canonicalBody(path, a)).digest('base64url').slice(0, 22);
}
