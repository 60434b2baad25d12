// load/scenarios.json, read by the local runner and the benchmark harness the way the k6
// scripts read it: the endpoints, the ids they need, and k6's threshold expressions.
import { readFileSync } from 'node:fs';

export interface Endpoint {
  name: string;
  path: string;
  heavy?: boolean;
}

export interface ScenarioSpec {
  description: string;
  script: string;
  vus: number;
  duration: string;
  thresholds: Record<string, string[]>;
  pageLines?: number;
  pollMs?: number;
  path?: string;
  holdSeconds?: number;
  /** busy: the weight of each kind of page visit, and how the visits go (scenarios.json). */
  actions?: Record<string, number>;
  thinkMs?: number;
  follows?: number;
  pageSize?: number;
  oldPages?: number;
  maxOldPage?: number;
  /** fleet_reads: the fields the UI's console and waterfall ask for. */
  fields?: Record<string, string[]>;
  /** fleet_forces: forces a second, through which scheduler, how long a build may take to start, k6's maxVUs. */
  rate?: number;
  scheduler?: string;
  startTimeout?: string;
  maxVUs?: number;
}

export interface Scenarios {
  headers: Record<string, string>;
  endpoints: Endpoint[];
  scenarios: Record<string, ScenarioSpec>;
}

export function loadScenarios(file = new URL('./scenarios.json', import.meta.url)): Scenarios {
  return JSON.parse(readFileSync(file, 'utf8')) as Scenarios;
}

/** "30s", "2m", "1m30s", "500ms" -> seconds (the subset of k6 durations we use). */
export function seconds(duration: string): number {
  const parts = [...duration.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== duration) {
    throw new Error(`not a duration: ${duration} (use e.g. 30s, 2m, 1m30s)`);
  }
  const unit = { ms: 0.001, s: 1, m: 60, h: 3600 } as const;
  return parts.reduce((sum, p) => sum + Number(p[1]) * unit[p[2] as keyof typeof unit], 0);
}

export interface Ids {
  build: number;
  log: number;
}

/**
 * The ids the endpoints name: BUILD_ID / LOG_ID, or else found through the API itself (the
 * newest build, then the log with slug "huge" on its "test" step), as the k6 scripts do.
 */
export async function resolveIds(base: string, headers: Record<string, string>): Promise<Ids> {
  const get = async (path: string): Promise<any> => {
    const res = await fetch(base + path, { headers, signal: AbortSignal.timeout(120_000) });
    if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
    return res.json();
  };
  const build =
    Number(process.env.BUILD_ID) || (await get('/builds?order=-buildid&limit=1')).builds[0]?.buildid;
  if (!build) throw new Error('no build found: generate data first (load/generate/run.sh)');
  let log = Number(process.env.LOG_ID);
  if (!log) {
    const logs = (await get(`/builds/${build}/steps/test/logs`)).logs as { slug: string; logid: number }[];
    log = logs.find((l) => l.slug === 'huge')?.logid ?? 0;
    if (!log) throw new Error(`build ${build} has no log "huge" on its step "test": set LOG_ID`);
  }
  return { build, log };
}

export function fill(path: string, ids: Ids): string {
  return path.replaceAll('{build}', String(ids.build)).replaceAll('{log}', String(ids.log));
}

// ------------------------------------------------------------------ thresholds, as k6 reads them

/** What a metric collected: a trend (every sample, ms), a rate (true/false), or a counter. */
export type Metric =
  | { kind: 'trend'; samples: number[] }
  | { kind: 'rate'; passes: number; total: number }
  | { kind: 'counter'; count: number; seconds: number };

export interface Verdict {
  metric: string;
  expression: string;
  value: number;
  ok: boolean;
}

/**
 * k6's built-in HTTP metrics of a run, and its `checks` as the scripts here use them: one
 * check per request, passed when the request got an expected status.
 */
export function httpMetrics(
  durations: number[],
  requests: number,
  failed: number,
  seconds: number,
): Record<string, Metric> {
  return {
    http_req_duration: { kind: 'trend', samples: durations },
    http_req_failed: { kind: 'rate', passes: failed, total: requests },
    checks: { kind: 'rate', passes: requests - failed, total: requests },
    http_reqs: { kind: 'counter', count: requests, seconds },
  };
}

/** Nearest-rank percentile of samples sorted ascending (k6 interpolates; at our sample counts the two agree). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

function aggregate(metric: Metric, agg: string): number {
  const p = /^p\((\d+(?:\.\d+)?)\)$/.exec(agg);
  if (metric.kind === 'trend') {
    const s = metric.samples;
    if (p) return percentile(s, Number(p[1]));
    if (agg === 'med') return percentile(s, 50);
    if (agg === 'avg') return s.reduce((a, b) => a + b, 0) / s.length;
    if (agg === 'min') return s[0] ?? Number.NaN;
    if (agg === 'max') return s[s.length - 1] ?? Number.NaN;
  } else if (metric.kind === 'rate') {
    if (agg === 'rate') return metric.total === 0 ? 0 : metric.passes / metric.total;
  } else {
    if (agg === 'count') return metric.count;
    if (agg === 'rate') return metric.count / metric.seconds;
  }
  throw new Error(`threshold aggregation "${agg}" does not apply to a ${metric.kind} metric`);
}

const COMPARE: Record<string, (a: number, b: number) => boolean> = {
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
  '==': (a, b) => a === b,
  '===': (a, b) => a === b,
  '!=': (a, b) => a !== b,
};

/** Evaluates k6 threshold expressions ("p(95)<150", "rate<0.01", "count>0") on collected metrics. */
export function judge(thresholds: Record<string, string[]>, metrics: Record<string, Metric>): Verdict[] {
  const verdicts: Verdict[] = [];
  for (const [name, expressions] of Object.entries(thresholds)) {
    const metric = metrics[name];
    if (!metric) throw new Error(`threshold on "${name}", a metric this runner does not collect`);
    if (metric.kind === 'trend') metric.samples.sort((a, b) => a - b);
    for (const expression of expressions) {
      const m = /^\s*([a-z]+|p\(\d+(?:\.\d+)?\))\s*(<=|>=|===|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/.exec(
        expression,
      );
      if (!m) throw new Error(`threshold "${expression}" on ${name}: not of the form aggregation op number`);
      const value = aggregate(metric, m[1]!);
      verdicts.push({ metric: name, expression, value, ok: COMPARE[m[2]!]!(value, Number(m[3])) });
    }
  }
  return verdicts;
}
