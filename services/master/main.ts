// The master process: `npm run master`, or the container's `master` command. The one place
// the master reads its environment.
// Telemetry starts before anything else is loaded: instrumentation patches pg, ioredis and
// http only in modules loaded after it (core/telemetry/tracing.ts). The process itself is
// service.ts. So the environment's reader is imported after it too: core/config/env.ts
// imports core/redis.ts, which loads ioredis. Loaded before the hook, ioredis was patched
// only because BullMQ (loaded after, by service.ts) loads it again; a probe importing env.ts,
// then telemetry, then core/redis.ts made no span for a PING, and did once bullmq was
// imported in between (2026-11-29, load/results/fleet.md's 04:16 sitting). Nothing before
// telemetry now, which test/core/telemetry.test.ts checks of every main.ts.
import { startTelemetry } from '../core/telemetry/tracing.js';

await startTelemetry('flotilla-master');
const [{ loadMasterEnv }, { runMasterProcess }] = await Promise.all([
  import('../core/config/env.js'),
  import('./service.js'),
]);
await runMasterProcess(loadMasterEnv(process.env), process.env);
