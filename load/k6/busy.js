// The web UI in a busy cluster: each virtual user visits one page after another, chosen by
// the weights of scenarios.json's busy.actions, as a person in the UI does while builds run
// (load/busy/run.sh starts 20 of them on real workers and keeps them running). A page is
// the few API requests the UI makes for it; what a user saw on one page (running and
// finished builds) chooses the next, so the URLs spread over builders, builds, logs and
// offsets. load/busy/mix.ts does the same for the local runner: keep the two alike.
//   k6 run -e BASE_URL=http://127.0.0.1:8080/api/v2 load/k6/busy.js
// Optional: -e VUS=40 -e DURATION=60s -e THINK_MS=0 -e POLL_MS=0
import { check, sleep } from 'k6';
import http from 'k6/http';
import { Counter, Trend } from 'k6/metrics';
import { BASE_URL, optionsFor } from './lib.js';

const spec = JSON.parse(open('../scenarios.json'));
const sc = spec.scenarios.busy;
const weights = Object.entries(sc.actions);
const totalWeight = weights.reduce((sum, [, w]) => sum + w, 0);
// 0 and 0 measure what the server can serve; a person waits a few seconds (-e THINK_MS=3000)
const thinkMs = Number(__ENV.THINK_MS || sc.thinkMs);
const pollMs = Number(__ENV.POLL_MS || sc.pollMs);
const linesRead = new Counter('log_lines_read');
const pageTrends = {};
for (const [name] of weights) pageTrends[name] = new Trend(`page_${name}`, true);

export const options = optionsFor(spec, 'busy');

export function setup() {
  const res = http.get(`${BASE_URL}/builders`, { headers: spec.headers, tags: { name: 'setup' } });
  const builderids = res.status === 200 ? res.json('builders').map((b) => b.builderid) : [];
  if (builderids.length === 0) throw new Error(`no builders at ${BASE_URL} (HTTP ${res.status})`);
  return { builderids };
}

const pick = (items) => items[Math.floor(Math.random() * items.length)];

function get(path, name, parse, expected) {
  const res = http.get(BASE_URL + path, {
    headers: spec.headers,
    tags: { name },
    responseCallback: http.expectedStatuses(...(expected || [200])),
  });
  check(res, { 'status is expected': (r) => (expected || [200]).indexOf(r.status) >= 0 });
  return parse && res.status === 200 ? res.json() : undefined;
}

// module state is per virtual user: what this user has seen, which the UI links to
let running = [];
let seen = [];
const remember = (body) => {
  if (body?.builds?.length) seen = body.builds;
};
const refreshRunning = () => {
  const body = get('/builds?complete=false&order=-buildid&limit=50', 'running-builds', true);
  if (body) running = body.builds;
};

const pages = {
  home() {
    remember(get('/builds?order=-buildid&limit=20', 'newest-builds', true));
    refreshRunning();
    get('/builders', 'builders');
  },
  builders() {
    get('/builders', 'builders');
    get('/workers', 'workers');
    get('/masters', 'masters');
  },
  builder_builds(data) {
    const b = pick(data.builderids);
    get(`/builders/${b}`, 'builder');
    remember(get(`/builders/${b}/builds?order=-number&limit=${sc.pageSize}`, 'builder-builds', true));
    get(`/buildrequests?builderid=${b}&complete=false&limit=50`, 'builder-requests');
  },
  build() {
    if (running.length === 0 && seen.length === 0) refreshRunning();
    const b = pick(Math.random() < 0.5 && running.length > 0 ? running : seen.length > 0 ? seen : running);
    if (!b) return;
    get(`/builders/${b.builderid}/builds/${b.number}?property=*`, 'build');
    get(`/builds/${b.buildid}/steps`, 'build-steps');
  },
  follow_log() {
    refreshRunning();
    // with nothing running (the quiet phase), a finished build's log: the same requests
    const b = pick(running.length > 0 ? running : seen);
    if (!b) return;
    const steps = (get(`/builds/${b.buildid}/steps`, 'build-steps', true)?.steps || []).filter(
      (s) => s.started_at != null,
    );
    const step = steps[steps.length - 1];
    if (!step) return;
    const log = (get(`/steps/${step.stepid}/logs`, 'step-logs', true)?.logs || [])[0];
    if (!log) return;
    let offset = Math.max(0, log.num_lines - 100);
    for (let i = 0; i < sc.follows; i++) {
      // past the end of a log that has not grown yet: 404, as in log-tail.js
      const body = get(
        `/logs/${log.logid}/contents?offset=${offset}&limit=1000`,
        'log-follow',
        true,
        [200, 404],
      );
      const content = body?.logchunks?.[0]?.content || '';
      const lines = content.split('\n').length - 1;
      linesRead.add(lines);
      offset += lines;
      if (pollMs) sleep(pollMs / 1000);
    }
  },
  old_builds(data) {
    const b = pick(data.builderids);
    const first = 1 + Math.floor(Math.random() * sc.maxOldPage);
    for (let p = first; p < first + sc.oldPages; p++) {
      remember(
        get(
          `/builders/${b}/builds?order=-number&limit=${sc.pageSize}&offset=${p * sc.pageSize}`,
          'old-builds',
          true,
        ),
      );
    }
  },
};

export default function (data) {
  let r = Math.random() * totalWeight;
  let name = weights[weights.length - 1][0];
  for (const [n, w] of weights) {
    r -= w;
    if (r < 0) {
      name = n;
      break;
    }
  }
  const t0 = Date.now();
  pages[name](data);
  pageTrends[name].add(Date.now() - t0);
  if (thinkMs) sleep(thinkMs / 1000);
}
