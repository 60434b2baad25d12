// Review issue 13, finding 8 (low): answers that depend on who asks carry Cache-Control:
// private and Vary: Cookie, Authorization whenever authorization is not fully open.
import { describe, expect, it } from 'vitest';
import { ReviewStack, useReviewStack } from '../lib/review-stack.js';

const review = useReviewStack();

describe('answers that depend on who asks', () => {
  it('are private to the asker, and vary with the cookie and the authorization', async () => {
    const admin = await review.stack.login('admin');
    for (const [url, session] of [
      ['/api/v2/changes', undefined],
      ['/api/v2/builders/4/builds', admin],
      ['/api/v2/builders/2/builds', undefined],
      ['/api/v2/logs/1/raw', admin],
      ['/api/v2/nosuch', undefined],
    ] as const) {
      const a = await review.stack.get(url, session ? { session } : {});
      expect(a.headers['cache-control'], url).toBe('private');
      const vary = String(a.headers.vary)
        .split(',')
        .map((v) => v.trim().toLowerCase());
      expect(vary, url).toEqual(expect.arrayContaining(['cookie', 'authorization']));
    }
  });

  it('without any rule (everything open to everyone) they stay shareable', async () => {
    const open = await ReviewStack.start({
      db: review.stack.db,
      redis: review.stack.redis,
      patch: (c) => {
        c.auth = { ...c.auth, users: [], allow_rules: undefined };
      },
    });
    try {
      const a = await open.get('/api/v2/changes', { headers: { accept: 'application/json' } });
      expect(a.status).toBe(200);
      expect(a.headers['cache-control']).toBeUndefined();
      expect(a.headers.vary).toBe('Accept, Accept-Encoding');
    } finally {
      await open.close();
    }
  });
});
