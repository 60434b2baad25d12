// What publishing a build start's events costs a publisher and Redis, the two ways a batch has
// been sent: one EVALSHA of bus.ts's one-event script per event (as core/events/publisher.ts
// did until 2026-11-29), and one call of publish-batch.ts's script for the whole batch (as it
// does now). Each way, in turns, sends STARTS starts' events (23 each, 272 bytes a message: the
// phase S figures load/bench/hear-cost.ts explains) in batches of BATCH events, one pipeline a
// batch as the publisher makes it (SCRIPT LOAD first), and reads this process's CPU
// (process.cpuUsage) and Redis's (INFO cpu) around it. Nothing subscribes.
//
//   REDIS_URL=redis://127.0.0.1:PORT node --import tsx load/bench/publish-cost.ts
//   BATCH=23 ROUNDS=5 STARTS=4000 REDIS_URL=... node --import tsx load/bench/publish-cost.ts
//
// A fresh redis-server is best (`redis-server --port PORT --save ''`): the stream is trimmed
// to its bound, and the run deletes it at the end.
import { Redis } from 'ioredis';
import {
  busPayload,
  EVENTS_STREAM,
  PUBLISH_SCRIPT,
  PUBLISH_SHA,
  publishArgs,
} from '../../services/core/events/bus.js';
import { mastersHear } from '../../services/core/events/master-kinds.js';
import {
  PUBLISH_BATCH_SCRIPT,
  PUBLISH_BATCH_SHA,
  publishBatchArgs,
} from '../../services/core/events/publish-batch.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const STARTS = Number(process.env.STARTS ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const BATCH = Number(process.env.BATCH ?? 23);
const EVENTS_A_START = 23;

const redis = new Redis(redisUrl);
const key = ['builds', 7, 'steps', 3, 'updated'];
const payload = busPayload(key, { text: 'x'.repeat(220) });
const events = Array.from({ length: STARTS * EVENTS_A_START }, (_, i) => ({
  payload,
  forMasters: i % EVENTS_A_START === 0 && mastersHear(['builds', 1, 'new']),
}));

async function redisCpu(): Promise<number> {
  const info = await redis.info('cpu');
  const get = (k: string) => Number(new RegExp(`${k}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return get('used_cpu_sys') + get('used_cpu_user');
}

const ways = {
  'one EVALSHA an event': async (batch: typeof events) => {
    const pipe = redis.pipeline().script('LOAD', PUBLISH_SCRIPT);
    for (const e of batch) pipe.evalsha(PUBLISH_SHA, ...publishArgs(e.payload, e.forMasters));
    await pipe.exec();
  },
  'one call a batch': async (batch: typeof events) => {
    await redis
      .pipeline()
      .script('LOAD', PUBLISH_BATCH_SCRIPT)
      .evalsha(PUBLISH_BATCH_SHA, ...publishBatchArgs(batch))
      .exec();
  },
};

console.log(`${STARTS} starts of ${EVENTS_A_START} events, batches of ${BATCH}; us a start:`);
for (let round = 1; round <= ROUNDS; round++) {
  for (const [name, send] of Object.entries(ways)) {
    const [c0, r0] = [process.cpuUsage(), await redisCpu()];
    for (let i = 0; i < events.length; i += BATCH) await send(events.slice(i, i + BATCH));
    const c = process.cpuUsage(c0);
    const r = (await redisCpu()) - r0;
    const us = (s: number) => ((s * 1e6) / STARTS).toFixed(0);
    console.log(`round ${round}, ${name}: publisher ${us((c.user + c.system) / 1e6)}, Redis ${us(r)}`);
  }
}
await redis.del(EVENTS_STREAM);
redis.disconnect();
