// Shared by the k6 scripts of this folder (k6's JavaScript API only). Each entry script
// opens ../scenarios.json itself (open() belongs to the init context of the entry script)
// and passes it here.
import http from 'k6/http';

/** BASE_URL is the API root, e.g. http://127.0.0.1:8080/api/v2 (no trailing slash needed). */
export const BASE_URL = (__ENV.BASE_URL || 'http://127.0.0.1:8080/api/v2').replace(/\/$/, '');

/** The events socket of an API root (BASE_URL's by default): its origin (and any prefix before /api/v2), scheme ws(s), path /ws. */
export function wsUrl(base = BASE_URL) {
  return base.replace(/^http/, 'ws').replace(/\/api\/v2$/, '') + '/ws';
}

/**
 * The ids the endpoints name: BUILD_ID / LOG_ID, or else found through the API (the newest
 * build, then the log with slug "huge" on its "test" step), as load/run.ts does. Call it
 * from setup(): its requests are not part of the measured iterations.
 */
export function resolveIds(spec) {
  const params = { headers: spec.headers, tags: { name: 'setup' }, timeout: '120s' };
  let build = Number(__ENV.BUILD_ID || 0);
  if (!build) {
    const res = http.get(`${BASE_URL}/builds?order=-buildid&limit=1`, params);
    if (res.status !== 200 || res.json('builds.#') === 0) {
      throw new Error(`no build found at ${BASE_URL} (HTTP ${res.status}): generate data first`);
    }
    build = res.json('builds.0.buildid');
  }
  let log = Number(__ENV.LOG_ID || 0);
  if (!log) {
    const res = http.get(`${BASE_URL}/builds/${build}/steps/test/logs`, params);
    const huge = res.status === 200 ? res.json('logs').filter((l) => l.slug === 'huge')[0] : undefined;
    if (!huge) throw new Error(`build ${build} has no log "huge" on its step "test": set LOG_ID`);
    log = huge.logid;
  }
  return { build, log };
}

export function fill(path, ids) {
  return path.split('{build}').join(String(ids.build)).split('{log}').join(String(ids.log));
}

/**
 * k6 options for one scenario of scenarios.json: constant VUs for a duration, its thresholds.
 * Thresholds on k6's http_* metrics apply to the scenario's own requests
 * (http_req_duration{scenario:NAME}), not to the requests setup() makes to find ids.
 */
export function optionsFor(spec, name) {
  const sc = spec.scenarios[name];
  const thresholds = {};
  for (const metric of Object.keys(sc.thresholds)) {
    thresholds[metric.indexOf('http_') === 0 ? `${metric}{scenario:${name}}` : metric] =
      sc.thresholds[metric];
  }
  return {
    scenarios: {
      [name]: {
        executor: 'constant-vus',
        vus: Number(__ENV.VUS || sc.vus),
        duration: __ENV.DURATION || sc.duration,
      },
    },
    thresholds,
    setupTimeout: '180s',
  };
}
