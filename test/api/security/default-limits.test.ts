// Review issue 13, what held: the default size limits of a request, over real sockets, on the
// review's stack (api/lib/review.yaml). limits.test.ts tests configured limits and each answer's
// shape.
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { useReviewStack } from '../lib/review-stack.js';

const review = useReviewStack({ listen: true });

describe('size limits, over real sockets', () => {
  /** Sends a request head as it is; the status of the answer. */
  const status = (head: string) =>
    new Promise<number>((resolve, reject) => {
      const u = new URL(review.base);
      const s = connect(Number(u.port), u.hostname);
      let data = '';
      s.on('data', (d: Buffer) => {
        data += d.toString('latin1');
        const m = /^HTTP\/1\.1 (\d{3})/.exec(data);
        if (m) {
          s.destroy();
          resolve(Number(m[1]));
        }
      });
      s.on('error', reject);
      s.on('end', () => reject(new Error(`no answer: ${data.slice(0, 100)}`)));
      s.write(head);
    });

  it('the defaults: a body past 1 MiB is 413, a URL past 8 KiB 414, headers past 16 KiB 431', async () => {
    const get = (path: string, extra = '') =>
      `GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}Connection: close\r\n\r\n`;
    expect(
      await status(
        `POST /api/v2/workers/2 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${2 * 1024 * 1024}\r\n\r\n`,
      ),
    ).toBe(413);
    expect(await status(get(`/api/v2/builds?x=${'a'.repeat(9 * 1024)}`))).toBe(414);
    expect(await status(get('/api/v2/builds', `X-Big: ${'a'.repeat(20 * 1024)}\r\n`))).toBe(431);
    expect(await status(get('/api/v2/changes?limit=1'))).toBe(200);
  });
});
