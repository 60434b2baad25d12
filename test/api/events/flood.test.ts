// Review issue 13, finding 5 (medium): one client must not starve the others. 100 /ws connections
// with 1,000 `logs/<id>/lines` subscriptions each crashed the tail loop ("Maximum call stack size
// exceeded"): another user's live log got nothing, and unrelated requests took seconds. Now
// connections per client and subscriptions per connection (log tails apart) are capped, as the
// configuration says, and nothing in the tail loop grows the stack with the number of tails.
// (load/events/flood.ts measures the flood itself: load/events/RESULTS.md.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { LogTailer } from '../../../services/api/events/log-lines.js';
import { appendToLogStream } from '../../../services/core/logs/live-stream.js';
import { createRedis, type Redis } from '../../../services/core/redis.js';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import { waitFor } from '../../helpers/wait.js';
import { ReviewStack } from '../lib/review-stack.js';
import { useRedis, WsClient } from './lib.js';

const suiteRedis = useRedis();
let redis: Redis;
let stack: ReviewStack;
let ws: string;
beforeAll(async () => {
  redis = createRedis(suiteRedis.url, 'event-flood');
  stack = await ReviewStack.start({
    redis,
    patch: (c) => {
      c.www.events = {
        max_connections_per_client: 3,
        max_subscriptions_per_connection: 10,
        max_log_subscriptions_per_connection: 2,
        session_check_seconds: 10,
      };
    },
  });
  ws = `${(await stack.listen()).replace('http', 'ws')}/ws`;
});
afterAll(async () => {
  await stack?.close();
  redis?.disconnect();
});

/** An upgrade from `from`: the socket, or the HTTP status that refused it. */
function connect(from: string): Promise<WebSocket | number> {
  return new Promise((resolve, reject) => {
    const s = new WebSocket(ws, { localAddress: from });
    s.once('open', () => resolve(s));
    s.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
    });
    s.once('error', reject);
  });
}

describe('per client and per connection', () => {
  it('a client gets as many connections as configured; then 429, and others still get theirs', async () => {
    const mine: WebSocket[] = [];
    try {
      for (let i = 0; i < 3; i++) mine.push((await connect('127.0.0.11')) as WebSocket);
      expect(await connect('127.0.0.11')).toBe(429);
      const other = await connect('127.0.0.12');
      expect(other).toBeInstanceOf(WebSocket);
      (other as WebSocket).close();
      // A connection that ends gives its place back.
      mine.pop()!.close();
      let again: WebSocket | number = 429;
      for (let i = 0; i < 50 && again === 429; i++) {
        again = await connect('127.0.0.11');
        if (again === 429) await new Promise((r) => setTimeout(r, 20));
      }
      expect(again).toBeInstanceOf(WebSocket);
      mine.push(again as WebSocket);
    } finally {
      for (const s of mine) s.close();
    }
  });

  it('subscriptions beyond the caps are refused with a 400 frame, log tails counted apart', async () => {
    const c = await WsClient.open(ws, { localAddress: '127.0.0.13' });
    try {
      const answer = async (path: string, id: number) =>
        JSON.parse(await c.call({ cmd: 'startConsuming', path, _id: id }));
      expect((await answer('logs/1/lines', 1)).code).toBe(200);
      expect((await answer('logs/2/lines', 2)).code).toBe(200);
      expect(await answer('logs/3/lines', 3)).toEqual({
        error: 'too many log line subscriptions (at most 2)',
        code: 400,
        _id: 3,
      });
      for (let i = 0; i < 8; i++) expect((await answer(`builds/${i}/*`, 10 + i)).code).toBe(200);
      expect(await answer('builds/99/*', 99)).toEqual({
        error: 'too many subscriptions (at most 10)',
        code: 400,
        _id: 99,
      });
    } finally {
      c.close();
    }
  });
});

describe('the tail loop', () => {
  it("tails 100,000 logs at once (the review's 100 x 1,000) and still delivers each one's lines", async () => {
    const tailer = new LogTailer(redis, 20, createLogger('test', 'silent'));
    const got: { logid: number; content: string }[] = [];
    const consumer = {
      deliver: (_s: unknown, e: { message: { logid: number; content: string } }) => got.push(e.message),
    };
    try {
      for (let logid = 1; logid <= 100_000; logid++) {
        tailer.add({ consumer, path: `logs/${logid}/lines` } as never, logid);
      }
      // A tail starts at its log's newest line once it has looked: append until both arrive.
      let n = 0;
      const seen = () => new Set(got.map((m) => m.logid));
      await waitFor(
        "both logs' lines",
        () => {
          if (n++ % 40 === 0) {
            void appendToLogStream(redis, 77_777, n, 'deep in the flood\n');
            void appendToLogStream(redis, 100_000, n, 'the last one\n');
          }
          return seen().has(77_777) && seen().has(100_000);
        },
        { everyMs: 5, timeoutMs: 30_000 },
      );
      // Appends that meet in one poll arrive as one batch.
      const line = (logid: number) => (logid === 77_777 ? /^(deep in the flood\n)+$/ : /^(the last one\n)+$/);
      for (const m of got) expect(m.content).toMatch(line(m.logid));
    } finally {
      tailer.stop();
    }
  }, 60_000);
});
