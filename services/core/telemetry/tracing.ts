// OpenTelemetry for every process. Exporters follow the standard OTEL_* variables; unlike
// the SDK's own default (OTLP to localhost:4318), nothing is exported unless asked for,
// because most installations run no collector and a failing exporter only adds noise.
//
// With a trace exporter (or span processors, in tests), HTTP, PostgreSQL and Redis are
// instrumented. Instrumentation patches a library when it is loaded, so startTelemetry must
// run before the service loads pg, ioredis or fastify: each service's main.ts starts it and
// only then imports the rest (service.ts). ESM imports are patched through the
// import-in-the-middle loader hook, registered here for those libraries alone. Without an
// exporter nothing is patched, so an untraced process pays nothing for it.
import { register } from 'node:module';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { PLATFORM_PATHS } from '../http/platform-paths.js';

export interface Telemetry {
  /** Whether spans are recorded and exported (a trace exporter or span processors). */
  readonly tracing: boolean;
  shutdown(): Promise<void>;
}

export interface TelemetryOptions {
  /** For tests: hand spans here instead of to what OTEL_TRACES_EXPORTER says. */
  spanProcessors?: SpanProcessor[];
}

const PATCHED = ['pg', 'pg-pool', 'ioredis', 'http', 'https', 'node:http', 'node:https'];

/** Exporters the environment does not name are off ('none'). */
export function applyExporterDefaults(
  env: Record<string, string | undefined>,
  skip: readonly string[] = [],
): void {
  for (const v of ['OTEL_TRACES_EXPORTER', 'OTEL_METRICS_EXPORTER', 'OTEL_LOGS_EXPORTER']) {
    if (!env[v] && !skip.includes(v)) env[v] = 'none';
  }
}

let started: Telemetry | null = null;

/** Start telemetry once per process; later calls return the same handle. */
export function startTelemetry(serviceName: string, opts: TelemetryOptions = {}): Telemetry {
  if (started) return started;
  applyExporterDefaults(process.env, opts.spanProcessors ? ['OTEL_TRACES_EXPORTER'] : []);
  process.env.OTEL_SERVICE_NAME ??= serviceName;
  const tracing = opts.spanProcessors !== undefined || process.env.OTEL_TRACES_EXPORTER !== 'none';
  if (tracing)
    register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, { data: { include: PATCHED } });
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME,
    ...(opts.spanProcessors ? { spanProcessors: opts.spanProcessors } : {}),
    instrumentations: tracing
      ? [
          new HttpInstrumentation({
            ignoreIncomingRequestHook: (req) => PLATFORM_PATHS.has((req.url ?? '').split('?')[0] ?? ''),
          }),
          // Queries and commands outside any span (heartbeats, polls) would each be a trace of one.
          new PgInstrumentation({ requireParentSpan: true }),
          new IORedisInstrumentation({ requireParentSpan: true }),
        ]
      : [],
  });
  sdk.start();
  started = {
    tracing,
    shutdown: async () => {
      await sdk.shutdown();
    },
  };
  return started;
}
