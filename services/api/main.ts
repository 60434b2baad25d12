// The API process: `npm run api`, or the container's `api` command.
// Telemetry starts before anything else is loaded: instrumentation patches pg, ioredis and
// http only in modules loaded after it (core/telemetry/tracing.ts). The process itself is
// service.ts.
import { startTelemetry } from '../core/telemetry/tracing.js';

await startTelemetry('flotilla-api');
await import('./service.js');
