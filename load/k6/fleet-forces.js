// Issue 35's latency on the fleet (load/fleet/run.ts): request submitted to build started,
// with forces arriving at a constant rate (the constant-arrival-rate executor: each iteration
// starts at its time, whether or not the ones before have finished). An iteration opens the
// API's /ws, subscribes to builds/*/new, and once that is acknowledged POSTs the force
// scheduler's JSON-RPC `force` for one builder (the scheduler's builder_names in turn), then
// waits for the `new` event of the build of the request it got (events that come before the
// POST's answer are kept). load/fleet/forces.ts does the same for the local runner: keep the
// two alike.
//   k6 run -e BASE_URL=http://127.0.0.1:8080/api/v2 -e RATE=10 load/k6/fleet-forces.js
// Optional: -e BASE_URLS=URL1,URL2 (iteration i forces through the i-th in turn, as
// load/fleet/run.ts does through its two APIs), -e DURATION=30s, -e VUS=20 (allocated
// beforehand), -e MAX_VUS=1000, -e START_TIMEOUT=60s, -e SCHEDULER=fleet.
// build_start: ms from sending the POST to the event. build_start_failed: forces refused, or
// whose build did not start within START_TIMEOUT. builds_started: builds seen to start.
import { check } from 'k6';
import exec from 'k6/execution';
import http from 'k6/http';
import { Counter, Rate, Trend } from 'k6/metrics';
import { clearTimeout, setTimeout } from 'k6/timers';
import { WebSocket } from 'k6/websockets';
import { BASE_URL, optionsFor, wsUrl } from './lib.js';

const spec = JSON.parse(open('../scenarios.json'));
const sc = spec.scenarios.fleet_forces;
const buildStart = new Trend('build_start', true);
const startFailed = new Rate('build_start_failed');
const started = new Counter('builds_started');

const BASES = (__ENV.BASE_URLS || BASE_URL).split(',').map((b) => b.replace(/\/$/, ''));
const RATE = Number(__ENV.RATE || sc.rate);
const START_TIMEOUT = __ENV.START_TIMEOUT || sc.startTimeout;
const SCHEDULER = __ENV.SCHEDULER || sc.scheduler;

/** "60s", "2m", "1m30s", "500ms" -> ms (the durations scenarios.json uses). */
function ms(duration) {
  const unit = { ms: 1, s: 1000, m: 60000, h: 3600000 };
  let total = 0;
  duration.replace(/(\d+(?:\.\d+)?)(ms|s|m|h)/g, (_, n, u) => {
    total += Number(n) * unit[u];
    return '';
  });
  return total;
}

const base = optionsFor(spec, 'fleet_forces');
export const options = {
  ...base,
  scenarios: {
    fleet_forces: {
      executor: 'constant-arrival-rate',
      // k6's rate is whole iterations per timeUnit: per 100 s, so that 80% of a measured rate
      // (a fraction a second) arrives as asked
      rate: Math.round(RATE * 100),
      timeUnit: '100s',
      duration: __ENV.DURATION || sc.duration,
      preAllocatedVUs: Number(__ENV.VUS || sc.vus),
      maxVUs: Number(__ENV.MAX_VUS || sc.maxVUs),
      // an iteration started near the end may wait that long for its build
      gracefulStop: START_TIMEOUT,
    },
  },
};

export function setup() {
  const res = http.get(`${BASES[0]}/forceschedulers/${SCHEDULER}`, {
    headers: spec.headers,
    tags: { name: 'setup' },
  });
  const builders = res.status === 200 ? res.json('forceschedulers.0.builder_names') : undefined;
  if (!builders || builders.length === 0)
    throw new Error(`${BASES[0]}: no force scheduler "${SCHEDULER}" with builders (HTTP ${res.status})`);
  return { builders };
}

/** The request id of a force's answer: one builder, one request; undefined when refused. */
function requestOf(res) {
  try {
    const body = res.status === 200 ? res.json() : undefined;
    const ids = body && body.error === undefined && body.result ? Object.values(body.result[1]) : [];
    return ids.length === 1 ? ids[0] : undefined;
  } catch (_) {
    return undefined;
  }
}

export default function (data) {
  const i = exec.scenario.iterationInTest;
  const api = BASES[i % BASES.length];
  const builder = data.builders[i % data.builders.length];
  const seen = {};
  let sentAt = 0;
  let brid;
  let accepted = false;
  let startMs;
  const socket = new WebSocket(wsUrl(api));
  const timer = setTimeout(() => socket.close(), ms(START_TIMEOUT));
  const startedAt = (at) => {
    startMs = at - sentAt;
    socket.close();
  };
  socket.onopen = () => socket.send(JSON.stringify({ cmd: 'startConsuming', path: sc.path, _id: 1 }));
  socket.onmessage = (e) => {
    let msg;
    try {
      msg = JSON.parse(e.data);
    } catch (_) {
      return socket.close();
    }
    if (msg._id === 1) {
      if (msg.code !== 200) return socket.close();
      sentAt = Date.now();
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'force',
        params: { username: 'fleet <fleet@example.com>', builderNames: [builder] },
      });
      http
        .asyncRequest('POST', `${api}/forceschedulers/${SCHEDULER}`, body, {
          headers: { 'content-type': 'application/json' },
          tags: { name: 'force' },
          timeout: START_TIMEOUT,
        })
        .then((res) => {
          brid = requestOf(res);
          accepted = brid !== undefined;
          if (!accepted) socket.close();
          else if (seen[brid] !== undefined) startedAt(seen[brid]);
        });
    } else if (msg.k && msg.m && typeof msg.m.buildrequestid === 'number') {
      const at = Date.now();
      if (msg.m.buildrequestid === brid) startedAt(at);
      else if (brid === undefined) seen[msg.m.buildrequestid] = at;
    }
  };
  socket.onerror = () => socket.close();
  socket.onclose = () => {
    clearTimeout(timer);
    check(null, {
      'force accepted': () => accepted,
      'build started': () => startMs !== undefined,
    });
    startFailed.add(startMs === undefined);
    if (startMs !== undefined) {
      buildStart.add(startMs);
      started.add(1);
    }
  };
}
