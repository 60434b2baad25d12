// Log tailing: each virtual user follows the huge log like a browser following a build. It
// asks for the next pageLines lines from its offset, advances by the lines it got, waits
// pollMs, and starts again at line 0 once past the end (a 404, which is expected here).
//   k6 run -e BASE_URL=http://127.0.0.1:8080/api/v2 load/k6/log-tail.js
import { check, sleep } from 'k6';
import http from 'k6/http';
import { Counter } from 'k6/metrics';
import { BASE_URL, optionsFor, resolveIds } from './lib.js';

const spec = JSON.parse(open('../scenarios.json'));
const sc = spec.scenarios.log_tail;
const linesRead = new Counter('log_lines_read');

export const options = optionsFor(spec, 'log_tail');

export function setup() {
  const ids = resolveIds(spec);
  const res = http.get(`${BASE_URL}/logs/${ids.log}`, { headers: spec.headers, tags: { name: 'setup' } });
  return { log: ids.log, lines: res.status === 200 ? res.json('logs.0.num_lines') : 0 };
}

// module state is per virtual user: each one starts at its own place in the log
let offset = -1;

export default function (data) {
  if (offset < 0) offset = data.lines > 0 ? ((__VU - 1) * 50000) % data.lines : 0;
  const res = http.get(`${BASE_URL}/logs/${data.log}/contents?offset=${offset}&limit=${sc.pageLines}`, {
    headers: spec.headers,
    tags: { name: 'log-contents' },
    responseCallback: http.expectedStatuses(200, 404),
  });
  check(res, { 'status is 200 or 404 past the end': (r) => r.status === 200 || r.status === 404 });
  if (res.status === 200) {
    const content = res.json('logchunks.0.content') || '';
    const lines = content.split('\n').length - 1;
    linesRead.add(lines);
    offset += lines;
  } else {
    offset = 0;
  }
  sleep(sc.pollMs / 1000);
}
