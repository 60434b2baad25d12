// The fleet_forces scenario's iterations, as load/k6/fleet-forces.js runs them: issue 35 §1
// item 3, request submitted to build started, with forces arriving at a constant rate (k6's
// constant-arrival-rate executor: each iteration starts at its time, whether or not the ones
// before have finished; one that would make more than maxVUs wait at once is dropped).
//
// An iteration: open the API's /ws, subscribe to `path` (builds/*/new), and once that is
// acknowledged, POST the force scheduler's JSON-RPC `force` for one builder (load/force.ts;
// the scheduler's builder_names in turn) and wait for the `new` event of the build of the
// request it answered. build_start is the time from sending the POST to that event. The
// subscription comes first so that no build can start unseen; events that come before the
// POST's answer are kept and looked up once it comes.
//
// Used by load/run.ts (`node --import tsx load/run.ts fleet_forces --base ... --rate N`) and
// by load/fleet/run.ts's phase C, which gives both of its APIs: iteration i forces through
// bases[i % n]. The k6 script and this make the same requests: keep the two alike.
import WebSocket from 'ws';
import { forceOneRequest } from '../force.js';
import { type Metric, type ScenarioSpec, seconds } from '../scenario.js';

interface Outcome {
  /** The force was sent (its subscription acknowledged first). */
  sent?: boolean;
  /** ms from sending the force to its build's new event; undefined when it did not start. */
  startMs?: number;
  /** ms the POST took to be answered; undefined when it failed. */
  postMs?: number;
}

/** The events socket of an API root (http://host:port/api/v2 -> ws://host:port/ws), as lib.js's wsUrl. */
export const wsUrl = (base: string) => `${base.replace(/^http/, 'ws').replace(/\/api\/v2$/, '')}/ws`;

async function builderNames(base: string, scheduler: string, headers: Record<string, string>) {
  const res = await fetch(`${base}/forceschedulers/${scheduler}`, { headers });
  const names = res.ok
    ? ((await res.json()) as { forceschedulers?: { builder_names?: string[] }[] }).forceschedulers?.[0]
        ?.builder_names
    : undefined;
  if (!names?.length)
    throw new Error(`${base}: no force scheduler "${scheduler}" with builders (${res.status})`);
  return names;
}

/** One force, from subscribing to its build's start (or the limit). */
function iteration(
  base: string,
  scheduler: string,
  builder: string,
  path: string,
  limitMs: number,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const outcome: Outcome = {};
    const seen = new Map<number, number>();
    let sentAt = 0;
    let brid: number | undefined;
    let done = false;
    const socket = new WebSocket(wsUrl(base));
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.terminate();
      resolve(outcome);
    };
    const timer = setTimeout(finish, limitMs);
    const started = (at: number) => {
      outcome.startMs = at - sentAt;
      finish();
    };
    socket.on('open', () => socket.send(JSON.stringify({ cmd: 'startConsuming', path, _id: 1 })));
    socket.on('message', (data) => {
      if (done) return;
      let msg: { _id?: number; code?: number; k?: string; m?: any };
      try {
        msg = JSON.parse(String(data));
      } catch {
        return finish();
      }
      if (msg._id === 1) {
        if (msg.code !== 200) return finish();
        sentAt = Date.now();
        outcome.sent = true;
        forceOneRequest(base, scheduler, {
          username: 'fleet <fleet@example.com>',
          builderNames: [builder],
        }).then((id) => {
          if (done) return;
          outcome.postMs = Date.now() - sentAt;
          brid = id;
          const at = seen.get(id);
          if (at !== undefined) started(at);
        }, finish);
      } else if (msg.k && typeof msg.m?.buildrequestid === 'number') {
        const at = Date.now();
        if (msg.m.buildrequestid === brid) started(at);
        else if (brid === undefined) seen.set(msg.m.buildrequestid, at);
      }
    });
    socket.on('error', finish);
    socket.on('close', finish);
  });
}

/** Runs the scenario against `bases` (iteration i on bases[i % n]); k6's metrics of it. */
export async function fleetForces(
  sc: ScenarioSpec,
  bases: string[],
  headers: Record<string, string>,
): Promise<Record<string, Metric>> {
  const scheduler = sc.scheduler ?? 'fleet';
  const names = await builderNames(bases[0]!, scheduler, headers);
  const rate = sc.rate ?? 10;
  const limitMs = seconds(sc.startTimeout ?? '60s') * 1000;
  const maxVUs = sc.maxVUs ?? 1000;
  const n = Math.round(rate * seconds(sc.duration));
  const outcomes: Promise<Outcome>[] = [];
  let waiting = 0;
  let dropped = 0;
  const begin = performance.now();
  for (let i = 0; i < n; i++) {
    const wait = begin + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (waiting >= maxVUs) {
      dropped++;
      continue;
    }
    waiting++;
    const one = iteration(
      bases[i % bases.length]!,
      scheduler,
      names[i % names.length]!,
      sc.path ?? 'builds/*/new',
      limitMs,
    );
    outcomes.push(one.finally(() => waiting--));
  }
  const all = await Promise.all(outcomes);
  const took = (performance.now() - begin) / 1000;
  const starts = all.flatMap((o) => (o.startMs === undefined ? [] : [o.startMs]));
  const posts = all.flatMap((o) => (o.postMs === undefined ? [] : [o.postMs]));
  const sent = all.filter((o) => o.sent).length;
  return {
    build_start: { kind: 'trend', samples: starts },
    build_start_failed: { kind: 'rate', passes: all.length - starts.length, total: all.length },
    builds_started: { kind: 'counter', count: starts.length, seconds: took },
    // the force POSTs alone, as k6 counts them (a force never sent, its socket refused, is no request)
    http_req_duration: { kind: 'trend', samples: posts },
    http_req_failed: { kind: 'rate', passes: sent - posts.length, total: sent },
    // k6's checks: the force was accepted, its build started
    checks: { kind: 'rate', passes: posts.length + starts.length, total: 2 * all.length },
    dropped_iterations: { kind: 'counter', count: dropped, seconds: took },
    iterations: { kind: 'counter', count: all.length, seconds: took },
  };
}
