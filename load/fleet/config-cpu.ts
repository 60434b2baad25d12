// CPU of reading the fleet's configuration (1,000 builders and workers by default), as a master
// does at its start: YAML, then the schema. The first parse (cold, as a master's only one is)
// and the median of RUNS parses, in CPU milliseconds.
//
//   node --import tsx load/fleet/config-cpu.ts      (BUILDERS, WORKERS, RUNS)
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import { fleetYaml } from './config.js';

const text = fleetYaml({
  builders: Number(process.env.BUILDERS ?? 1000),
  workers: Number(process.env.WORKERS ?? 1000),
  masters: 3,
});
const runs = Number(process.env.RUNS ?? 9);
const ms: number[] = [];
for (let i = 0; i < runs; i++) {
  const c0 = process.cpuUsage();
  parseMasterConfig(text);
  const c = process.cpuUsage(c0);
  ms.push((c.user + c.system) / 1000);
}
const first = ms[0]!;
ms.sort((a, b) => a - b);
console.log(
  `parseMasterConfig, ${text.length} bytes: first (cold) ${first.toFixed(0)} ms, median ${ms[Math.floor(runs / 2)]!.toFixed(0)} ms of CPU (min ${ms[0]!.toFixed(0)}, max ${ms.at(-1)!.toFixed(0)}) over ${runs} runs; load average (1 min) ${(await import('node:os')).loadavg()[0]!.toFixed(1)}`,
);
