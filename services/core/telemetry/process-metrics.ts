// Node's process metrics (memory, CPU, event loop lag, GC, handles) for every process's
// /metrics, from prom-client's defaults less three of them: nodejs_active_handles_total,
// nodejs_active_requests_total and nodejs_active_resources_total are gauges with a name
// Prometheus reserves for counters, which `promtool check metrics` refuses. Their totals
// are the sums of nodejs_active_handles, nodejs_active_requests and nodejs_active_resources
// (by type), which stay.
import { collectDefaultMetrics, type Registry } from 'prom-client';

const MISNAMED = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

export function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  for (const name of MISNAMED) registry.removeSingleMetric(name);
}
