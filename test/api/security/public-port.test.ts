// Review issue 13, finding 8 (low): /metrics and /readyz on the public port: metrics only on
// the probe port, readiness cheap and without details.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../helpers/wait.js';
import { useReviewStack } from '../lib/review-stack.js';

const review = useReviewStack();

describe('the public port', () => {
  it('has no /metrics, and a readiness without details', async () => {
    expect((await review.stack.get('/metrics')).status).toBe(404);
    // Ready once its connections are up (503 `unavailable` until then): the first request of
    // a fresh stack may come before that.
    let ready = await review.stack.get('/readyz');
    await waitFor(
      'the public /readyz to say ready',
      async () => {
        ready = await review.stack.get('/readyz');
        return ready.status === 200;
      },
      { timeoutMs: 15_000 },
    );
    expect([ready.status, ready.json()]).toEqual([200, { status: 'ready' }]);
    // The details are the probe port's (services/api/service.ts serves these).
    expect((await review.stack.app.probes.metrics()).body).toContain('flotilla_http_requests_total');
  });
});
