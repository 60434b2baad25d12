// A batch of events in one script call (services/core/events/publish-batch.ts), against a real
// redis-server of its own (the stream key is broken on purpose below): each event appended and
// published as bus.ts's one-event script does, in order, the masters' channel only for the
// kinds masters hear; a refused write stops the batch there and says so.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EVENTS_CHANNEL, EVENTS_STREAM, EVENTS_WITH_IDS_CHANNEL } from '../../../services/core/events/bus.js';
import {
  batchOutcomes,
  ERROR_MARK,
  PUBLISH_BATCH_SCRIPT,
  publishBatchArgs,
} from '../../../services/core/events/publish-batch.js';
import { createRedis, type Redis } from '../../../services/core/redis.js';
import { type Running, startRedis } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/wait.js';

let server: Running;
let pub: Redis;
let sub: Redis;
const heard: { channel: string; text: string }[] = [];
beforeAll(async () => {
  const r = await startRedis();
  server = r.proc;
  pub = createRedis(r.url, 'batch-pub');
  sub = createRedis(r.url, 'batch-sub');
  sub.on('message', (channel: string, text: string) => heard.push({ channel, text }));
  await sub.subscribe(EVENTS_CHANNEL, EVENTS_WITH_IDS_CHANNEL);
});
afterAll(async () => {
  pub?.disconnect();
  sub?.disconnect();
  await server?.stop('SIGKILL');
});

const EVENTS = [
  { payload: '{"k":"steps/1/new","m":{"stepid":1}}', forMasters: false },
  { payload: '{"k":"builds/1/finished","m":{"buildid":1}}', forMasters: true },
  { payload: '{"k":"logs/2/new","m":{"logid":2}}', forMasters: false },
];

const run = (events = EVENTS) =>
  pub.eval(PUBLISH_BATCH_SCRIPT, ...publishBatchArgs(events)) as Promise<string[]>;

it('appends and publishes each event in order, on the masters channel only those masters hear', async () => {
  heard.length = 0;
  const ids = await run();
  expect(ids).toHaveLength(3);
  const stream = await pub.xrange(EVENTS_STREAM, '-', '+');
  expect(stream.map(([id]) => id)).toEqual(ids);
  expect(stream.map(([, f]) => f[1])).toEqual(EVENTS.map((e) => e.payload));
  await waitFor('the four messages', () => heard.length === 4);
  expect(heard.filter((h) => h.channel === EVENTS_CHANNEL).map((h) => h.text)).toEqual([EVENTS[1]!.payload]);
  expect(heard.filter((h) => h.channel === EVENTS_WITH_IDS_CHANNEL).map((h) => h.text)).toEqual(
    EVENTS.map((e, i) => `${e.payload.slice(0, -1)},"id":"${ids[i]}"}`),
  );
  expect(batchOutcomes(3, ids, null)).toEqual([null, null, null]);
});

it('stops at a refused write, publishes nothing of it or after it, and says which failed', async () => {
  await pub.del(EVENTS_STREAM);
  await pub.set(EVENTS_STREAM, 'not a stream');
  heard.length = 0;
  const reply = await run();
  expect(reply).toHaveLength(1);
  expect(reply[0]).toMatch(new RegExp(`^${ERROR_MARK}WRONGTYPE`));
  const outcomes = batchOutcomes(3, reply, null);
  expect(outcomes.every((e) => e instanceof Error && e.message.startsWith('WRONGTYPE'))).toBe(true);
  // A message would have come before this round trip's answer (one connection, in order).
  await sub.ping();
  expect(heard).toEqual([]);
  await pub.del(EVENTS_STREAM);
});

it('reads a reply part way: the events before the failure sent, the failed one and those after it not', () => {
  const failed = batchOutcomes(4, ['1-0', '2-0', `${ERROR_MARK}OOM`], null);
  expect(failed.map((e) => e?.message ?? null)).toEqual([null, null, 'OOM', 'OOM']);
  const call = new Error('NOSCRIPT');
  expect(batchOutcomes(2, undefined, call)).toEqual([call, call]);
  expect(batchOutcomes(2, undefined, null).map((e) => e?.message)).toEqual(['no reply', 'no reply']);
});
