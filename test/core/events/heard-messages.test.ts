// What a process hears on the event channel (services/core/events/bus.ts' busSubscription),
// through a real redis-server: each message's key is read from the text's start and its body
// parsed only when a handler asks for it, with the same key, body and trace context as a
// whole parse gives; a text not of busPayload's form (a key with an escape) is parsed whole.
// And what busPayload carries of the trace: the active span's traceparent, none without one.
import { context, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type BusMessage,
  busPayload,
  busSubscription,
  EVENTS_CHANNEL,
  parseBusMessage,
} from '../../../services/core/events/bus.js';
import { createRedis, type Redis } from '../../../services/core/redis.js';
import { type Running, startRedis } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/wait.js';

let server: Running;
let pub: Redis;
let sub: Redis;
beforeAll(async () => {
  const r = await startRedis();
  server = r.proc;
  pub = createRedis(r.url, 'heard-pub');
  sub = createRedis(r.url, 'heard-sub');
});
afterAll(async () => {
  pub?.disconnect();
  sub?.disconnect();
  await server?.stop('SIGKILL');
});

it('hands each message with its key, and its body and trace context as a whole parse reads them', async () => {
  const bus = busSubscription(sub);
  await bus.ready;
  const heard: BusMessage[] = [];
  bus((msg) => heard.push(msg));
  const texts = [
    busPayload(['builds', 7, 'new'], { buildid: 7, state_string: 'starting "x"' }),
    JSON.stringify({ k: 'control/builds/7/stop', m: { reason: 'by hand', results: 6 }, tp: '00-a-b-01' }),
    JSON.stringify({ k: 'builders/"odd\\name"/x', m: [1, 2] }),
    JSON.stringify({ m: null, k: 'keys/second' }),
    'not json',
  ];
  for (const t of texts) await pub.publish(EVENTS_CHANNEL, t);
  await waitFor('four messages', () => heard.length >= 4);
  const wanted = texts.map(parseBusMessage).filter((m) => m !== null);
  expect(heard.map((h) => h.k)).toEqual(wanted.map((w) => w.k));
  expect(heard.map((h) => ({ k: h.k, m: h.m, tp: h.tp, id: h.id }))).toEqual(
    wanted.map((w) => ({ k: w.k, m: w.m, tp: w.tp, id: w.id })),
  );
});

it("carries the active span's traceparent, and none when no span is active", () => {
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  try {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const spanId = 'b7ad6b7169203331';
    const traced = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: 1 });
    const inSpan = context.with(traced, () => parseBusMessage(busPayload(['builds', 1, 'new'], {})));
    expect(inSpan?.tp).toBe(`00-${traceId}-${spanId}-01`);
    expect(parseBusMessage(busPayload(['builds', 1, 'new'], {}))).toEqual({ k: 'builds/1/new', m: {} });
  } finally {
    propagation.disable();
    context.disable();
  }
});
