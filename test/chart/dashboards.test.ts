// The chart's Grafana dashboards: valid dashboards on the metrics that matter (request rate
// and latency, builds running and pending, queue depth, log lines per second, event
// fan-out), each metric one a Flotilla process really exports, shipped as ConfigMaps for
// Grafana's sidecar when asked.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CHART, CI_VALUES, ensureHelm, FETCH_TIMEOUT_MS, ROOT, render } from './lib/helm.js';
import { ofKind } from './lib/objects.js';

beforeAll(() => {
  ensureHelm();
}, FETCH_TIMEOUT_MS);

const files = readdirSync(join(CHART, 'dashboards')).filter((f) => f.endsWith('.json'));
const dashboards = files.map((f) => JSON.parse(readFileSync(join(CHART, 'dashboards', f), 'utf8')));
const exprs = dashboards.flatMap((d) =>
  d.panels.flatMap((p: any) => p.targets.map((t: any) => t.expr as string)),
);

/** Metric names a PromQL expression reads (histogram series back to their metric). */
function metricsOf(expr: string): string[] {
  return [...expr.matchAll(/\b((?:flotilla|process|nodejs)_[a-z0-9_]+)/g)].map((m) =>
    m[1]!.replace(/_(bucket|sum|count)$/, ''),
  );
}

/** Every metric name the services register with prom-client (`name: '...'`). */
function registered(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts'))
        for (const m of readFileSync(p, 'utf8').matchAll(/name: [`']((?:flotilla)_[a-z0-9_]+)[`']/g))
          names.add(m[1]!);
    }
  };
  walk(join(ROOT, 'services'));
  // Node's process metrics, from prom-client's defaults (core/telemetry/process-metrics.ts).
  names.add('process_resident_memory_bytes');
  return names;
}

describe('the Grafana dashboards', () => {
  it('are dashboards: a uid, a title, panels with Prometheus queries, a namespace variable', () => {
    expect(dashboards.length).toBeGreaterThan(0);
    for (const d of dashboards) {
      expect(d.uid).toMatch(/^[a-z0-9-]{1,40}$/);
      expect(d.title).toBeTruthy();
      expect(d.templating.list.map((v: any) => v.name)).toEqual(['datasource', 'namespace']);
      for (const p of d.panels) {
        expect(p.targets.length, p.title).toBeGreaterThan(0);
        for (const t of p.targets) expect(t.expr, p.title).toContain('namespace="$namespace"');
      }
    }
  });

  it('show request rate and latency, builds running and pending, queue depth, log lines and event fan-out', () => {
    const used = new Set(exprs.flatMap(metricsOf));
    for (const m of [
      'flotilla_http_requests_total',
      'flotilla_http_request_duration_seconds',
      'flotilla_builds_running',
      'flotilla_buildrequests_queued',
      'flotilla_jobs_queue_depth',
      'flotilla_log_lines_total',
      'flotilla_events_dispatched_total',
    ])
      expect(used.has(m), m).toBe(true);
  });

  it('query only metrics a Flotilla process exports', () => {
    const known = registered();
    expect(known.size).toBeGreaterThan(20);
    const unknown = [...new Set(exprs.flatMap(metricsOf))].filter((m) => !known.has(m));
    expect(unknown).toEqual([]);
    // The check can fail: a misspelled metric is not known.
    expect(known.has('flotilla_builds_runing')).toBe(false);
  });

  it('ship as ConfigMaps labelled for the sidecar when enabled, and not by default', () => {
    expect(ofKind(render([CI_VALUES[0]!]), 'ConfigMap').map((c) => c.metadata.name)).toEqual([
      'flotilla-ci-config',
    ]);
    const maps = ofKind(render([CI_VALUES[1]!]), 'ConfigMap').filter((c) =>
      c.metadata.name.includes('dashboard'),
    );
    expect(maps.map((c) => c.metadata.name)).toEqual(['flotilla-prod-dashboard-overview']);
    expect(maps[0]!.metadata.labels.grafana_dashboard).toBe('1');
    expect(JSON.parse(maps[0]!.data['flotilla-overview.json']).uid).toBe('flotilla-overview');
  });
});
