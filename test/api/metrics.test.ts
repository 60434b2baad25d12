// An API pod's /metrics: requests by route (the endpoint's pattern, never the raw URL) and
// status, their durations, the read pool, the event fan-out and Node's process metrics,
// served on the probe port (services/api/service.ts), never on the public one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../../services/core/events/bus.js';
import { publisherFor } from '../../services/core/events/publisher.js';
import { createRedis } from '../../services/core/redis.js';
import { testEnv } from '../helpers/env.js';
import { waitFor } from '../helpers/wait.js';
import { ApiUnderTest } from './lib/harness.js';

let api: ApiUnderTest;
beforeAll(async () => {
  api = await ApiUnderTest.start('fixture');
});
afterAll(async () => {
  await api?.close();
});

async function scrape(): Promise<Map<string, number>> {
  // What the probe port's /metrics serves (services/api/service.ts).
  const a = await api.app.probes.metrics();
  expect(a.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  const samples = new Map<string, number>();
  for (const line of a.body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

describe("an API pod's /metrics", () => {
  it('counts requests by endpoint pattern and status, and times them', async () => {
    for (const id of [1, 2, 3]) expect((await api.get(`/builds/${id}/steps`)).status).toBe(200);
    expect((await api.get('/builds/999999/steps')).status).toBe(404);
    expect((await api.get('/no/such/thing')).status).toBe(404);
    const m = await scrape();
    const steps = 'route="/api/v2/builds/n:buildid/steps"';
    expect(m.get(`flotilla_http_requests_total{method="GET",${steps},status="200"}`)).toBe(3);
    expect(m.get(`flotilla_http_requests_total{method="GET",${steps},status="404"}`)).toBe(1);
    expect(m.get('flotilla_http_requests_total{method="GET",route="/api/v2/*",status="404"}')).toBe(1);
    expect(m.get(`flotilla_http_request_duration_seconds_count{method="GET",${steps}}`)).toBe(4);
    expect(m.get(`flotilla_http_request_duration_seconds_bucket{le="10",method="GET",${steps}}`)).toBe(4);
    // No series is named after a raw URL.
    expect([...m.keys()].some((k) => k.includes('999999'))).toBe(false);
    // The public port does not serve them.
    expect((await api.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
  });

  it('shows the read pool, the event fan-out and the process', async () => {
    const redis = createRedis(testEnv().redisUrl, 'metrics-test');
    try {
      const before = (await scrape()).get('flotilla_events_dispatched_total') ?? 0;
      await publish(redis, ['builds', 1, 'updated'], { buildid: 1 });
      await waitFor(
        'the event to be dispatched',
        async () => ((await scrape()).get('flotilla_events_dispatched_total') ?? 0) > before,
      );
    } finally {
      redis.disconnect();
    }
    // An event the API commits goes out through its publisher, and the counter says so.
    const published = (await scrape()).get('flotilla_events_published_total') ?? 0;
    publisherFor(api.redis).enqueue([{ key: ['builds', 1, 'updated'], message: { buildid: 1 } }]);
    await waitFor(
      `flotilla_events_published_total to pass ${published} once Redis confirms the event`,
      async () => ((await scrape()).get('flotilla_events_published_total') ?? 0) > published,
      { timeoutMs: 10_000 },
    );
    const m = await scrape();
    expect(m.get('flotilla_event_clients')).toBe(0);
    expect(m.get('flotilla_db_pool_connections{pool="read",state="waiting"}')).toBe(0);
    expect(m.get('flotilla_db_pool_connections{pool="read",state="idle"}')).toBeGreaterThan(0);
    expect(m.get('flotilla_db_pool_connections{pool="download",state="waiting"}')).toBe(0);
    expect(m.get('process_resident_memory_bytes')).toBeGreaterThan(10_000_000);
    // The event publisher's (core/events/metrics.ts): nothing waits, nothing was dropped.
    expect(m.get('flotilla_events_waiting')).toBe(0);
    expect(m.get('flotilla_events_published_total')).toBe(published + 1);
    expect(m.get('flotilla_events_dropped_total')).toBe(0);
  });
});
