// Review issue 13, what held: the GitHub hook's signature check, tried with signatures of every
// length as the review tried them, on the review's stack (api/lib/review.yaml).
import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GITHUB_SECRET, useReviewStack } from '../lib/review-stack.js';

const review = useReviewStack();

describe('GitHub signatures', () => {
  const body = JSON.stringify({ ref: 'refs/heads/main', commits: [], repository: { html_url: 'https://x' } });
  const send = (signature: string, header = 'x-hub-signature-256') =>
    review.stack.request('POST', '/change_hook/github', {
      headers: { 'content-type': 'application/json', 'x-github-event': 'push', [header]: signature },
      payload: body,
    });

  it('of every length but the right one are refused with 403, never a 500 (an appended digit too)', async () => {
    const good = createHmac('sha256', GITHUB_SECRET).update(body).digest('hex');
    for (let len = 0; len <= 80; len++) {
      const a = await send(`sha256=${good.slice(0, len)}${len > 64 ? '0'.repeat(len - 64) : ''}`);
      // The right signature passes the check (what the payload makes is another matter).
      if (len === 64) expect([200, 400], a.text).toContain(a.status);
      else expect(a.status, `length ${len}`).toBe(403);
    }
    expect((await send(`sha256=${'0'.repeat(64)}`)).status).toBe(403);
    expect((await send(`sha1=${'0'.repeat(40)}`, 'x-hub-signature')).status).toBe(403);
    expect((await send(`sha256=${randomBytes(32).toString('hex')}`)).status).toBe(403);
  });
});
