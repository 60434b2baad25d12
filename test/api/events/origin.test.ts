// Review issue 13, finding 8 (low): /ws (and /sse) ignored Origin where REST refuses a foreign
// one; the same rule now, on the review's stack (api/lib/review.yaml).
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { PUBLIC_URL, useReviewStack } from '../lib/review-stack.js';

const review = useReviewStack({ listen: true });

const OWN_ORIGIN = new URL(PUBLIC_URL).origin;

describe('/ws and /sse apply the Origin rule REST applies', () => {
  /** The status of a websocket upgrade with this Origin (101 when it opened). */
  function upgrade(origin: string | undefined): Promise<number> {
    return new Promise((resolve, reject) => {
      const s = new WebSocket(`${review.base.replace('http', 'ws')}/ws`, origin ? { origin } : {});
      s.once('open', () => {
        s.close();
        resolve(101);
      });
      s.once('unexpected-response', (_q, res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      s.once('error', reject);
    });
  }

  it('a foreign page cannot open a websocket; our own page, and a client without Origin, can', async () => {
    expect(await upgrade('http://evil.example')).toBe(400);
    expect(await upgrade(OWN_ORIGIN)).toBe(101);
    expect(await upgrade(undefined)).toBe(101);
    const rest = await review.stack.get('/api/v2/changes', { headers: { origin: 'http://evil.example' } });
    expect(rest.status).toBe(400);
  });

  it('nor an event stream', async () => {
    const foreign = await fetch(`${review.base}/sse/listen/changes/*/*`, {
      headers: { origin: 'http://evil.example' },
    });
    expect([foreign.status, await foreign.text()]).toEqual([400, '{"error": "invalid origin"}']);
  });
});
