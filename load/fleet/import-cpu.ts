// CPU a fresh process spends importing a service's compiled code, as the image runs it
// (`tsc -p tsconfig.build.json` into dist/, deploy/Dockerfile): the median of RUNS (9)
// processes, each timing its own import, in CPU milliseconds. Also which of a few packages
// the import loaded (those a master needs only for parts its configuration may not have).
//
//   node node_modules/typescript/bin/tsc -p tsconfig.build.json
//   node_modules/.bin/node --import tsx load/fleet/import-cpu.ts [dist/services/master/service.js]
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const target = pathToFileURL(resolve(process.argv[2] ?? 'dist/services/master/service.js')).href;
const runs = Number(process.env.RUNS ?? 9);
const WATCHED = ['nodemailer', 'nunjucks', 'bullmq', '@msgpack/msgpack'];
// Timed without resolve hooks (they cost); one more import, hooked, says what was loaded.
const timed = `
  const c0 = process.cpuUsage();
  await import(${JSON.stringify(target)});
  const c = process.cpuUsage(c0);
  console.log((c.user + c.system) / 1000);`;
const watched = `
  import { registerHooks } from 'node:module';
  const urls = new Set();
  registerHooks({ resolve: (s, c, next) => { const r = next(s, c); urls.add(r.url); return r; } });
  await import(${JSON.stringify(target)});
  console.log(JSON.stringify(${JSON.stringify(WATCHED)}.filter((p) => [...urls].some((u) => u.includes('/node_modules/' + p + '/')))));`;
const run = (script: string) =>
  execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
const ms = Array.from({ length: runs }, () => Number(run(timed))).sort((a, b) => a - b);
const loaded = JSON.parse(run(watched)) as string[];
console.log(
  `${process.argv[2] ?? 'dist/services/master/service.js'} (node ${process.version}): median ${ms[Math.floor(runs / 2)]!.toFixed(0)} ms of CPU (min ${ms[0]!.toFixed(0)}, max ${ms.at(-1)!.toFixed(0)}) over ${runs} imports; ` +
    `loaded ${loaded.join(', ') || 'none'} of ${WATCHED.join(', ')}; load average (1 min) ${loadavg()[0]!.toFixed(1)}`,
);
