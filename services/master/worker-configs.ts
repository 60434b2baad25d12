// One worker's settings out of a configuration's, by name. A build's start asked
// `config.workers.find` (a scan of every worker, a thousand in the fleet) and the claim pass
// kept a map of its own; both now share one map per configuration object (a reload makes a
// new object, so a stale map is never read). Measured (load/results/fleet.md, 2026-11-29
// 03:38, phase S with MASTER_CPU_PROF, load 12-18): the scan was the largest of the masters'
// own frames in a start, 3.2% of their busy samples outside the socket writes.
import type { MasterConfig, WorkerConfig } from '../core/config/master-config.js';

const byConfig = new WeakMap<MasterConfig, ReadonlyMap<string, WorkerConfig>>();

export function workerConfig(config: MasterConfig, name: string): WorkerConfig | undefined {
  let byName = byConfig.get(config);
  if (!byName) {
    byName = new Map(config.workers.map((w) => [w.name, w]));
    byConfig.set(config, byName);
  }
  return byName.get(name);
}
