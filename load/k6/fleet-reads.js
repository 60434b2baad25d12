// Issue 35's five reads at ten million builds (load/generate/fleet.sql's data), each virtual
// user doing them in turn without pause, on builders, builds and pages drawn at random; each
// read has its own trend (read_<name>) and p95 threshold. load/fleet/reads.ts does the same
// for the local runner (load/fleet/reads.sh): keep the two alike.
//   k6 run -e BASE_URL=http://127.0.0.1:8080/api/v2 load/k6/fleet-reads.js
// Optional: -e VUS=8 -e DURATION=60s
import { check } from 'k6';
import http from 'k6/http';
import { Trend } from 'k6/metrics';
import { BASE_URL, optionsFor } from './lib.js';

const spec = JSON.parse(open('../scenarios.json'));
const sc = spec.scenarios.fleet_reads;
const READS = ['builder_builds', 'console', 'waterfall', 'build', 'prev_success'];
const trends = {};
for (const name of READS) trends[name] = new Trend(`read_${name}`, true);

// fleet.sql's layout: builder b's build n is build (n-1)*1000 + b
const BUILDERS = 1000;
const BROKEN = [250, 500, 750, 1000];
const BROKEN_RUN = 2000; // their newest 2,000 builds failed (fleet.sql, any scale from 0.2)
const WITH_STEPS = 2000000;
const rand = (lo, hi) => lo + Math.floor(Math.random() * (hi - lo + 1));

export const options = optionsFor(spec, 'fleet_reads');

export function setup() {
  const params = { headers: spec.headers, tags: { name: 'setup' } };
  const newest = http.get(`${BASE_URL}/builds?order=-buildid&limit=1`, params);
  const maxBuild = newest.status === 200 ? newest.json('builds.0.buildid') : 0;
  // 10,000 at fleet.sql's scale 1; every fleet builder has as many
  const first = http.get(`${BASE_URL}/builders/1/builds?order=-number&limit=1`, params);
  const perBuilder = first.status === 200 ? first.json('builds.0.number') : 0;
  if (perBuilder < 10 || maxBuild < BUILDERS * perBuilder)
    throw new Error(`${BASE_URL} does not hold fleet.sql's data`);
  // Flotilla answers the builds of many changes in one read; Buildbot 3.7 has no such route.
  const oneRead = http.get(`${BASE_URL}/change_builds?changeid__in=1&limit=1`, params).status === 200;
  return {
    maxBuild,
    perBuilder,
    firstWithSteps: Math.max(1, BUILDERS * perBuilder - WITH_STEPS + 1),
    oneRead,
  };
}

function get(path, name) {
  const res = http.get(BASE_URL + path, { headers: spec.headers, tags: { name }, timeout: '60s' });
  check(res, { 'status is 200': (r) => r.status === 200 });
  return res.status === 200 ? res.json() : undefined;
}

const fieldQuery = (fields) => fields.map((f) => `field=${f}`).join('&');

const reads = {
  builder_builds() {
    get(`/builders/${rand(1, BUILDERS)}/builds?order=-number&limit=200`, 'builder-builds');
  },
  console(data) {
    const body = get('/changes?order=-changeid&limit=50', 'console-changes');
    const ids = body ? body.changes.map((c) => c.changeid) : [];
    if (data.oneRead) {
      const q = ids.map((id) => `changeid__in=${id}`).join('&');
      const fields = sc.fields.console;
      get(
        `/change_builds?${q}&order=-changeid&order=-buildid&limit=${ids.length * 50}&${fieldQuery(fields)}`,
        'console-builds',
      );
    } else {
      for (const id of ids) get(`/changes/${id}/builds`, 'console-change-builds');
    }
  },
  waterfall() {
    const page = rand(0, BUILDERS / 30 - 1);
    const body = get(
      `/builders?order=name&limit=30&offset=${page * 30}&field=builderid&field=name`,
      'waterfall-builders',
    );
    const q = (body ? body.builders : []).map((b) => `builderid__in=${b.builderid}`).join('&');
    const fields = sc.fields.waterfall;
    get(`/builds?${q}&order=-buildid&limit=100&${fieldQuery(fields)}`, 'waterfall-builds');
  },
  build(data) {
    const id = rand(data.firstWithSteps, data.maxBuild);
    get(`/builds/${id}`, 'build');
    get(`/builds/${id}/steps`, 'build-steps');
  },
  prev_success(data) {
    const broken = Math.random() < 0.5;
    const b = broken ? BROKEN[rand(0, BROKEN.length - 1)] : rand(1, BUILDERS);
    const n = rand(broken ? Math.max(2, data.perBuilder - BROKEN_RUN + 1) : 2, data.perBuilder);
    get(
      `/builders/${b}/builds?results=0&complete=true&number__lt=${n}&order=-number&limit=1`,
      'prev-success',
    );
    get(`/builds/${(n - 1) * BUILDERS + b}/changes`, 'build-changes');
  },
};

export default function (data) {
  for (const name of READS) {
    const t0 = Date.now();
    reads[name](data);
    trends[name].add(Date.now() - t0);
  }
}
