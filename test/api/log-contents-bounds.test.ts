// Review issue 13, finding 8 (low): /logs/N/contents?limit=2147483647&offset=2147483647 was a
// 500; an empty page now.
import { describe, expect, it } from 'vitest';
import { useReviewStack } from './lib/review-stack.js';

const review = useReviewStack();

describe('log contents past any end', () => {
  it("the review's request is an empty page, not a 500", async () => {
    const a = await review.stack.get('/api/v2/logs/1/contents?limit=2147483647&offset=2147483647', {
      headers: { accept: 'application/json' },
    });
    expect(a.status).toBe(200);
    expect(a.json().logchunks).toEqual([{ logid: 1, firstline: 2147483647, content: '' }]);
    const whole = await review.stack.get('/api/v2/logs/1/contents?limit=2147483647', {
      headers: { accept: 'application/json' },
    });
    expect(whole.json().logchunks[0].content.split('\n')).toHaveLength(165);
  });
});
