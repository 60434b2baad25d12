// The master process: `npm run master`, or the container's `master` command. The one place
// the master reads its environment.
// Telemetry starts before anything else is loaded: instrumentation patches pg, ioredis and
// http only in modules loaded after it (core/telemetry/tracing.ts). The process itself is
// service.ts.
import { loadMasterEnv } from '../core/config/env.js';
import { startTelemetry } from '../core/telemetry/tracing.js';

await startTelemetry('flotilla-master');
const { runMasterProcess } = await import('./service.js');
await runMasterProcess(loadMasterEnv(process.env), process.env);
