// The master process: `npm run master`, or the container's `master` command.
// Telemetry starts before anything else is loaded: instrumentation patches pg, ioredis and
// http only in modules loaded after it (core/telemetry/tracing.ts). The process itself is
// service.ts.
import { startTelemetry } from '../core/telemetry/tracing.js';

startTelemetry('flotilla-master');
await import('./service.js');
