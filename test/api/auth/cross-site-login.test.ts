// Review issue 13, finding 8 (low): GET /auth/login?token= and /auth/logout from another site
// (login CSRF, forced logout) are refused when Sec-Fetch-Site says cross-site.
import { describe, expect, it } from 'vitest';
import { sessionOf, useReviewStack } from '../lib/review-stack.js';
import { claimsOf } from './lib.js';

const review = useReviewStack();

describe('login and logout from another site', () => {
  const crossSite = { 'sec-fetch-site': 'cross-site' };

  it('a token login or a logout a foreign page sets off is refused, leaving the session as it was', async () => {
    const dev = await review.stack.login('dev');
    const login = await review.stack.get('/auth/login?token=attackers.own.token', {
      headers: crossSite,
      session: dev,
    });
    expect(login.status).toBe(403);
    expect(login.cookies).toEqual([]);
    const out = await review.stack.get('/auth/logout', { headers: crossSite, session: dev });
    expect(out.status).toBe(403);
    expect(out.cookies).toEqual([]);
    expect((await review.stack.get('/config', { session: dev })).json().user.username).toBe('dev');
  });

  it('from our own pages, another page of the same site, or typed in: as before', async () => {
    for (const site of ['same-origin', 'same-site', 'none']) {
      const dev = await review.stack.login('dev');
      const out = await review.stack.get('/auth/logout', {
        headers: { 'sec-fetch-site': site },
        session: dev,
      });
      expect(out.status, site).toBe(302);
      expect(claimsOf(sessionOf(out)!).user_info).toEqual({ anonymous: true });
    }
    const plain = await review.stack.login('dev');
    expect((await review.stack.get('/auth/logout', { session: plain })).status).toBe(302);
  });
});
