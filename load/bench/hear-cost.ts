// What hearing the cluster's events costs one master, apart from everything else a master
// does: a child process subscribes as a master does (core/events/bus.ts' busSubscription) and
// runs every master handler's key filter on each message; this process publishes the events
// of STARTS build starts on the masters' channel, either all of them (as every publisher did
// before core/events/master-kinds.ts) or only the kinds masters act on (as now), in turns,
// and reads the child's CPU (process.cpuUsage) around each batch. Phase S
// (load/fleet/burst.ts) measures the whole cluster, where a few hundred microseconds a start
// are under the noise of a busy machine.
//
//   REDIS_URL=redis://127.0.0.1:PORT node --import tsx load/bench/hear-cost.ts
//
// The events of a start are phase S's, in START_KEYS: 23 a start, one of a kind masters act
// on, as load/fleet/burst.ts counts them (load/results/fleet.md, 2026-11-29 06:03-06:09),
// each message MESSAGE_BYTES long: what Redis sent in those runs, 23.9 KiB a start less for
// 22 events fewer to four subscribers, is 272 bytes a message.
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import {
  busPayload,
  busSubscription,
  EVENTS_CHANNEL,
  type RoutingKey,
} from '../../services/core/events/bus.js';
import { mastersHear } from '../../services/core/events/master-kinds.js';
import { releasedLockOf } from '../../services/master/builds/locks.js';
import { clusterActionOf } from '../../services/master/cluster-events.js';
import { newChangeOf } from '../../services/master/old-build-canceller.js';
import { reportJobOf } from '../../services/master/reporters/events.js';
import { schedulerEventOf } from '../../services/master/schedulers/manager.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const STARTS = Number(process.env.STARTS ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const MESSAGE_BYTES = 272;

/** One start's events in phase S (N: the build's, request's, step's... id). */
const START_KEYS: readonly string[] = [
  ...['builders/N/builds/N/new', 'builds/N/new', 'workers/N/builds/N/new', 'builds/N/properties/update'],
  ...[
    'buildsets/N/builders/N/buildrequests/N/claimed',
    'buildrequests/N/claimed',
    'builders/N/buildrequests/N/claimed',
  ],
  // worker_preparation: new, started, updated, finished; the held step: new, started, updated.
  ...['new', 'started', 'updated', 'finished', 'new', 'started', 'updated'].flatMap((e) => [
    `builds/N/steps/N/${e}`,
    `steps/N/${e}`,
  ]),
  ...['logs/N/new', 'steps/N/logs/stdio/new'],
];

if (process.argv[2] === 'listen') {
  const bus = busSubscription(new Redis(redisUrl));
  let acted = 0;
  bus((msg) => {
    const done = releasedLockOf(msg.k);
    if (done?.startsWith('hear-cost-')) return process.send?.({ done, acted, cpu: process.cpuUsage() });
    const k = msg.k;
    if (clusterActionOf(k) || schedulerEventOf(k) || reportJobOf(msg) || newChangeOf(k) !== null) acted++;
  });
  void bus.ready.then(() => process.send?.({ ready: true }));
} else {
  const child = fork(fileURLToPath(import.meta.url), ['listen'], { execArgv: ['--import', 'tsx'] });
  const next = () => new Promise<Record<string, unknown>>((resolve) => child.once('message', resolve));
  await next();
  const pub = new Redis(redisUrl);
  // The message's other fields and JSON take about 60 of its bytes.
  const filler = 'x'.repeat(MESSAGE_BYTES - 60);
  let id = 1;
  const payloads = (onlyMasters: boolean): string[] => {
    const out: string[] = [];
    for (let s = 0; s < STARTS; s++) {
      id++;
      for (const k of START_KEYS) {
        const key: RoutingKey = k.split('/').map((p) => (p === 'N' ? id : p));
        if (!onlyMasters || mastersHear(key))
          out.push(busPayload(key, { buildid: id, buildrequestid: id, filler }));
      }
    }
    return out;
  };
  const batch = async (onlyMasters: boolean) => {
    const texts = payloads(onlyMasters);
    const marker = `hear-cost-${randomUUID()}`;
    const started = next();
    await pub.publish(EVENTS_CHANNEL, busPayload(['control', 'locks', `${marker}-start`, 'released'], {}));
    const start = (await started) as { cpu: NodeJS.CpuUsage };
    for (let i = 0; i < texts.length; i += 500) {
      const pipe = pub.pipeline();
      for (const t of texts.slice(i, i + 500)) pipe.publish(EVENTS_CHANNEL, t);
      await pipe.exec();
    }
    const end = next();
    await pub.publish(EVENTS_CHANNEL, busPayload(['control', 'locks', marker, 'released'], {}));
    const { cpu } = (await end) as { cpu: NodeJS.CpuUsage };
    const us = cpu.user + cpu.system - start.cpu.user - start.cpu.system;
    return { heard: texts.length / STARTS, usPerStart: us / STARTS };
  };
  console.log(
    `| round | events heard a start, all | listener CPU a start | events heard, masters' kinds | listener CPU a start |`,
  );
  console.log('|---|---|---|---|---|');
  for (let r = 1; r <= ROUNDS; r++) {
    const all = await batch(false);
    const only = await batch(true);
    console.log(
      `| ${r} | ${all.heard.toFixed(1)} | ${all.usPerStart.toFixed(0)} µs | ${only.heard.toFixed(1)} | ${only.usPerStart.toFixed(0)} µs |`,
    );
  }
  child.kill();
  pub.disconnect();
}
