// The worker agent: `npm run worker`, or the container's `worker` command.
// Telemetry starts before anything else is loaded: instrumentation patches pg, ioredis and
// http only in modules loaded after it (core/telemetry/tracing.ts). The process itself is
// service.ts.
import { startTelemetry } from '../core/telemetry/tracing.js';

await startTelemetry('flotilla-worker');
await import('./service.js');
