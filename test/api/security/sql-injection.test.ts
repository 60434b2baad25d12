// Review issue 13, what held: SQL injection in every place a read takes input, and in JSON-RPC
// parameters, on the review's stack (api/lib/review.yaml).
import { describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { useReviewStack } from '../lib/review-stack.js';

const review = useReviewStack({ login: ['admin', 'dev', 'guest'] });

describe('SQL injection', () => {
  const attempts = [
    "' OR '1'='1",
    "1' OR 1=1--",
    '1; DROP TABLE changes;--',
    "') UNION SELECT password_hash FROM users--",
    '1)) OR ((1=1',
    "%' OR 1=1 --",
    '\\',
    "'",
    '$1',
  ];

  it.each(attempts)('%s in every place a read takes input: no rows it should not find, no 500', async (s) => {
    const e = encodeURIComponent(s);
    const [{ n: changes }] = await review.stack.db.pool.query(sql`SELECT count(*)::int AS n FROM changes`);
    // Filters: what they find is what the text, taken literally, finds; or they are refused.
    const count = async (where: ReturnType<typeof sql>) =>
      (await review.stack.db.pool.query(sql`SELECT count(*)::int AS n FROM changes WHERE ${where}`))[0]!
        .n as number;
    const filters: [string, () => Promise<number>][] = [
      [`author=${e}`, () => count(sql`author = ${s}`)],
      [`author__contains=${e}`, () => count(sql`strpos(author, ${s}) > 0`)],
      [`author__in=${e}&author__in=x`, () => count(sql`author IN (${s}, 'x')`)],
      [`comments=${e}`, () => count(sql`comments = ${s}`)],
      [`changeid=${e}`, async () => 0],
      [`changeid__gt=${e}`, async () => 0],
    ];
    for (const [filter, expected] of filters) {
      const url = `/api/v2/changes?${filter}`;
      const a = await review.stack.get(url, { session: review.sessions.admin });
      expect([200, 400], `${url}: ${a.text.slice(0, 200)}`).toContain(a.status);
      if (a.status === 200) expect(a.json().meta.total, url).toBe(await expected());
    }
    for (const url of [`/api/v2/builders/4/builds?state_string=${e}`, `/api/v2/builds?builderid__in=${e}`]) {
      const a = await review.stack.get(url, { session: review.sessions.admin });
      expect([200, 400], `${url}: ${a.text.slice(0, 200)}`).toContain(a.status);
      if (a.status === 200) expect(a.json().meta.total, url).toBe(0);
    }
    // Everything else that takes text: refused or names nothing.
    for (const url of [
      `/api/v2/changes?order=${e}`,
      `/api/v2/changes?field=${e}`,
      `/api/v2/changes?limit=${e}`,
      `/api/v2/changes?offset=${e}`,
      `/api/v2/changes/${e}`,
      `/api/v2/builders/${e}/builds`,
      `/api/v2/workers/${e}`,
    ]) {
      const a = await review.stack.get(url, { session: review.sessions.admin });
      expect([400, 404], `${url}: ${a.text.slice(0, 200)}`).toContain(a.status);
    }
    const [{ n: after }] = await review.stack.db.pool.query(sql`SELECT count(*)::int AS n FROM changes`);
    expect(after).toBe(changes);
  });

  it('in JSON-RPC params: kept as the text it is', async () => {
    const reason = "x'); DROP TABLE builds; --";
    const a = await review.stack.rpc(
      '/forceschedulers/force-runtests',
      'force',
      { reason },
      { session: review.sessions.admin },
    );
    expect(a.status, a.text).toBe(200);
    const [bsid] = a.json().result as [number];
    const [row] = await review.stack.db.pool.query(sql`SELECT reason FROM buildsets WHERE id = ${bsid}`);
    expect(row.reason).toContain(reason);
    expect(
      (await review.stack.get('/api/v2/builds?limit=1', { session: review.sessions.admin })).status,
    ).toBe(200);
  });
});
