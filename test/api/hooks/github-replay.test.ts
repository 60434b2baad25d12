// Review issue 13, finding 8 (low): the GitHub hook accepted a replayed delivery; a delivery
// id, or a signed body, is remembered for a day, and a duplicate makes no change.
import { createHmac, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { GITHUB_SECRET, useReviewStack } from '../lib/review-stack.js';

const review = useReviewStack();

describe('GitHub deliveries are not replayed', () => {
  const payload = (n: number) =>
    JSON.stringify({
      ref: 'refs/heads/main',
      repository: { html_url: 'https://github.com/octo/hello', full_name: 'octo/hello' },
      head_commit: { message: `commit ${n}` },
      commits: [
        {
          id: `${n}`.padStart(40, '0'),
          message: `commit ${n}`,
          timestamp: '2026-11-24T10:00:00Z',
          url: `https://github.com/octo/hello/commit/${n}`,
          author: { name: 'Octo', email: 'octo@example.org' },
          committer: { name: 'Octo', email: 'octo@example.org' },
          added: [],
          modified: ['a.c'],
          removed: [],
        },
      ],
    });
  const deliver = (body: string, delivery: string) =>
    review.stack.request('POST', '/change_hook/github', {
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-github-delivery': delivery,
        'x-hub-signature-256': `sha256=${createHmac('sha256', GITHUB_SECRET).update(body).digest('hex')}`,
      },
      payload: body,
    });
  const changes = async () =>
    (await review.stack.db.pool.query(sql`SELECT count(*)::int AS n FROM changes`))[0]!.n as number;

  it("the review's replay: one signed delivery three times makes one change", async () => {
    const before = await changes();
    const body = payload(1);
    const id = randomUUID();
    expect((await deliver(body, id)).text).toBe('1 change found');
    expect((await deliver(body, id)).text).toBe('no change found');
    // Another id on the same signed body (the signature does not cover the headers).
    expect((await deliver(body, randomUUID())).text).toBe('no change found');
    expect(await changes()).toBe(before + 1);
    // Another delivery is another change.
    expect((await deliver(payload(2), randomUUID())).text).toBe('1 change found');
    expect(await changes()).toBe(before + 2);
  });
});
