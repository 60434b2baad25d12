// The large collections: each virtual user requests every endpoint of scenarios.json (all but
// the raw download) in turn, without pause, for the scenario's duration.
//   k6 run -e BASE_URL=http://127.0.0.1:8080/api/v2 load/k6/collections.js
// Optional: -e VUS=8 -e DURATION=30s -e BUILD_ID=... -e LOG_ID=...
import { check } from 'k6';
import http from 'k6/http';
import { BASE_URL, fill, optionsFor, resolveIds } from './lib.js';

const spec = JSON.parse(open('../scenarios.json'));
const endpoints = spec.endpoints.filter((e) => !e.heavy);

export const options = optionsFor(spec, 'collections');

export function setup() {
  return resolveIds(spec);
}

export default function (ids) {
  for (const e of endpoints) {
    const res = http.get(BASE_URL + fill(e.path, ids), { headers: spec.headers, tags: { name: e.name } });
    check(res, { 'status is 200': (r) => r.status === 200 });
  }
}
