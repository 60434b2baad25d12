// Event fan-out: N websocket clients spread over P real API processes, every client
// subscribed to the path every event matches; events published on the bus (as a master
// publishes them) at a steady rate; for each event, the time from just before its publish()
// to its arrival at the last client. Used by load/events/run.ts (the benchmark) and by
// test/api/events/cluster.test.ts (a small version).
//
// The clients live in this process, so their receive times share one clock with the
// publisher's (performance.now()); the price is that this process's event loop is part of
// what is measured, as a browser's would be.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { WebSocket } from 'ws';
import { publish } from '../../services/core/events/bus.js';
// The tests' process helpers: start by pid, wait for readiness, stop by the same pid.
import { freePort, type Running, start, status } from '../../test/helpers/processes.js';
import { waitFor } from '../../test/helpers/wait.js';

export interface FanoutOptions {
  databaseUrl: string;
  redisUrl: string;
  /** The folder holding services/api/main.ts (a snapshot of a commit, or the working tree). */
  apiDir: string;
  pods: number;
  clients: number;
  /** Events per second. */
  rate: number;
  events: number;
  /** What every client subscribes to; every event published matches it. */
  path?: string;
  log?: (line: string) => void;
  /** How long after the last publish deliveries still count (default 10 s). */
  settleMs?: number;
}

export interface PodFigures {
  /** Peak resident set size, KiB. */
  peakRssKiB: number;
  /** CPU time used during the measured run, as a share of one core. */
  cpuShare: number;
}

export interface FanoutResult {
  pods: number;
  clients: number;
  events: number;
  rate: number;
  /** Deliveries expected (clients × events) and missing ones; out-of-order ones. */
  expected: number;
  missing: number;
  outOfOrder: number;
  /** Clients whose connection the server closed during the run (too slow, no pong). */
  dropped: number;
  /** Publish → last client, ms, over events. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Publish → each client, ms, over all deliveries. */
  deliveryP99: number;
  perPod: PodFigures[];
  /** CPU time of this process (publisher and every client), as a share of one core. */
  clientsCpuShare: number;
}

export interface Pod {
  proc: Running;
  origin: string;
}

/** A real API process (`node --import tsx <apiDir>/services/api/main.ts`), once /readyz answers 200. */
export async function startPod(
  opts: Pick<FanoutOptions, 'databaseUrl' | 'redisUrl' | 'apiDir'>,
): Promise<Pod> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const proc = start(process.execPath, ['--import', 'tsx', join(opts.apiDir, 'services/api/main.ts')], {
    DATABASE_URL: opts.databaseUrl,
    REDIS_URL: opts.redisUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `${origin}/`,
    LOG_LEVEL: 'warn',
    OTEL_TRACES_EXPORTER: 'none',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
  });
  try {
    await waitFor('api /readyz', async () => (await status(`${origin}/readyz`)) === 200, {
      timeoutMs: 60_000,
      proc,
    });
  } catch (err) {
    await proc.stop('SIGKILL');
    throw err;
  }
  return { proc, origin };
}

export async function stopPod(pod: Pod): Promise<void> {
  await pod.proc.stop('SIGTERM', 10_000);
}

/** utime + stime of a process, in clock ticks (100 per second on Linux). */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

function peakRssKiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmHWM:'));
  return line ? Number(/(\d+)/.exec(line)![1]) : 0;
}

function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const SEQ = Buffer.from('"seq":');
const ACK = Buffer.from('"code":200');

/** The integer after `"seq":` in a frame, or null when there is none. */
function seqOf(frame: Buffer): number | null {
  let i = frame.indexOf(SEQ);
  if (i < 0) return null;
  i += SEQ.length;
  const negative = frame[i] === 0x2d;
  if (negative) i++;
  let n = 0;
  for (; i < frame.length && frame[i]! >= 0x30 && frame[i]! <= 0x39; i++) n = n * 10 + frame[i]! - 0x30;
  return negative ? -n : n;
}

/** A step as Buildbot's steps/<id>/finished event carries it. */
function stepMessage(seq: number): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    stepid: 100_000 + seq,
    number: seq % 12,
    name: `compile-${seq % 12}`,
    buildid: 5000 + Math.floor(seq / 12),
    started_at: now - 42,
    complete: true,
    complete_at: now,
    results: 0,
    state_string: 'compiled 1234 files',
    urls: [],
    hidden: false,
    seq,
  };
}

interface Client {
  socket: WebSocket;
  lastSeq: number;
  received: number;
  /** The close code, if the server closed the connection (1008: too slow). */
  closedWith: number | null;
}

export async function measureFanout(opts: FanoutOptions): Promise<FanoutResult> {
  const log = opts.log ?? (() => {});
  const path = opts.path ?? 'steps/*/*';
  const redis = new Redis(opts.redisUrl, { connectionName: 'fanout-publisher' });
  const pods: Pod[] = [];
  const clients: Client[] = [];
  try {
    for (let i = 0; i < opts.pods; i++) pods.push(await startPod(opts));
    log(`${opts.pods} API processes ready: ${pods.map((p) => p.origin).join(', ')}`);

    // Receive times, per event: the latest, and every one (for the per-delivery figure).
    const publishedAt = new Float64Array(opts.events);
    const lastAt = new Float64Array(opts.events);
    const counts = new Uint32Array(opts.events);
    const deliveries = new Float64Array(opts.events * opts.clients);
    let delivered = 0;
    const warm = new Set<Client>();
    let probe = 0;
    let outOfOrder = 0;

    const open = (i: number) =>
      new Promise<Client>((resolve, reject) => {
        const pod = pods[i % pods.length]!;
        // Each client from its own loopback address: many users, not one client holding
        // hundreds of connections (which the per-client limit refuses).
        const socket = new WebSocket(`${pod.origin.replace('http', 'ws')}/ws`, {
          skipUTF8Validation: true,
          localAddress: `127.1.${Math.floor(i / 250)}.${1 + (i % 250)}`,
        });
        const c: Client = { socket, lastSeq: -1, received: 0, closedWith: null };
        socket.once('close', (code) => {
          c.closedWith = code;
        });
        socket.once('error', reject);
        // Only the event's seq is read (no JSON.parse): at 1,000 clients the clients' own
        // parsing would otherwise be most of what is measured.
        socket.on('message', (data: Buffer) => {
          const now = performance.now();
          const seq = seqOf(data);
          if (seq === null) {
            if (data.includes(ACK)) resolve(c);
            return;
          }
          if (seq < 0) {
            if (seq === -probe) warm.add(c);
            return;
          }
          if (seq <= c.lastSeq) outOfOrder++;
          c.lastSeq = seq;
          c.received++;
          counts[seq]!++;
          if (delivered < deliveries.length) deliveries[delivered++] = now - publishedAt[seq]!;
          if (now > lastAt[seq]!) lastAt[seq] = now;
        });
        socket.once('open', () => socket.send(JSON.stringify({ cmd: 'startConsuming', path, _id: 1 })));
      });
    for (let i = 0; i < opts.clients; i += 50) {
      const batch = [];
      for (let j = i; j < Math.min(opts.clients, i + 50); j++) batch.push(open(j));
      clients.push(...(await Promise.all(batch)));
    }
    log(`${clients.length} clients subscribed to ${path}`);

    // Until a probe reaches every client, some pod may not have its subscription yet.
    const warmDeadline = Date.now() + 30_000;
    while (warm.size < clients.length) {
      if (Date.now() > warmDeadline)
        throw new Error(`only ${warm.size} of ${clients.length} clients hear events`);
      warm.clear();
      probe++;
      await publish(redis, ['steps', 0, 'probe'], { seq: -probe });
      await new Promise((r) => setTimeout(r, 200));
    }

    const cpuBefore = pods.map((p) => cpuTicks(p.proc.pid));
    const clientCpuBefore = process.cpuUsage();
    const started = performance.now();
    const interval = 1000 / opts.rate;
    for (let seq = 0; seq < opts.events; seq++) {
      const due = started + seq * interval;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      const message = stepMessage(seq);
      publishedAt[seq] = performance.now();
      await publish(redis, ['steps', message.stepid as number, 'finished'], message);
    }
    // Let the last events arrive (or not).
    const expected = opts.events * clients.length;
    const settleDeadline = performance.now() + (opts.settleMs ?? 10_000);
    while (delivered < expected && performance.now() < settleDeadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const elapsedS = (performance.now() - started) / 1000;
    const cpuAfter = pods.map((p) => cpuTicks(p.proc.pid));
    const clientCpu = process.cpuUsage(clientCpuBefore);

    const lastLatencies: number[] = [];
    for (let seq = 0; seq < opts.events; seq++) {
      if (counts[seq] === clients.length) lastLatencies.push(lastAt[seq]! - publishedAt[seq]!);
    }
    lastLatencies.sort((a, b) => a - b);
    const sortedDeliveries = deliveries.subarray(0, delivered).sort();
    const round = (x: number) => Math.round(x * 10) / 10;
    return {
      pods: opts.pods,
      clients: clients.length,
      events: opts.events,
      rate: opts.rate,
      expected,
      missing: expected - delivered,
      dropped: clients.filter((c) => c.closedWith !== null).length,
      outOfOrder,
      p50: round(percentile(lastLatencies, 50)),
      p90: round(percentile(lastLatencies, 90)),
      p99: round(percentile(lastLatencies, 99)),
      max: round(lastLatencies.at(-1) ?? Number.NaN),
      deliveryP99: round(percentile(sortedDeliveries, 99)),
      clientsCpuShare: round((clientCpu.user + clientCpu.system) / 1e6 / elapsedS),
      perPod: pods.map((p, i) => ({
        peakRssKiB: peakRssKiB(p.proc.pid),
        cpuShare: round((cpuAfter[i]! - cpuBefore[i]!) / 100 / elapsedS),
      })),
    };
  } finally {
    for (const c of clients) c.socket.terminate();
    await Promise.all(pods.map(stopPod));
    await redis.quit();
  }
}
