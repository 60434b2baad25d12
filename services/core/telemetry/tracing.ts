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
//
// Nor does it load the SDK: with every exporter off, NodeSDK.start() registers only a context
// manager and the W3C propagators (a trace context that comes in from a traced process, in a
// worker's command or an event, still reaches log lines), and those two are registered here
// from the packages they live in. Importing @opentelemetry/sdk-node and the three
// instrumentations took 0.2 CPU s of every API, master and worker process's start (0.6-0.75 s
// in all), whatever the exporters; the context manager and propagators take 0.04 s
// (load/results/test-suite.md).
import { register } from 'node:module';
import { context, propagation } from '@opentelemetry/api';
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
const EXPORTERS = ['OTEL_TRACES_EXPORTER', 'OTEL_METRICS_EXPORTER', 'OTEL_LOGS_EXPORTER'];

/** Exporters the environment does not name are off ('none'). */
export function applyExporterDefaults(
  env: Record<string, string | undefined>,
  skip: readonly string[] = [],
): void {
  for (const v of EXPORTERS) {
    if (!env[v] && !skip.includes(v)) env[v] = 'none';
  }
}

let started: Promise<Telemetry> | null = null;

/** Start telemetry once per process; later calls return the same handle. */
export function startTelemetry(serviceName: string, opts: TelemetryOptions = {}): Promise<Telemetry> {
  started ??= start(serviceName, opts);
  return started;
}

async function start(serviceName: string, opts: TelemetryOptions): Promise<Telemetry> {
  applyExporterDefaults(process.env, opts.spanProcessors ? ['OTEL_TRACES_EXPORTER'] : []);
  process.env.OTEL_SERVICE_NAME ??= serviceName;
  const tracing = opts.spanProcessors !== undefined || process.env.OTEL_TRACES_EXPORTER !== 'none';
  // What the SDK would do on its own settings: anything but every exporter off, the default
  // propagators and the SDK on goes through the SDK itself.
  const sdkNeeded =
    tracing ||
    EXPORTERS.some((v) => process.env[v] !== 'none') ||
    process.env.OTEL_PROPAGATORS !== undefined ||
    process.env.OTEL_SDK_DISABLED !== undefined;
  if (!sdkNeeded) return untraced();
  // Loaded before the hook is registered, as they were when they were static imports.
  const [{ NodeSDK }, { HttpInstrumentation }, { PgInstrumentation }, { IORedisInstrumentation }] =
    await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/instrumentation-http'),
      import('@opentelemetry/instrumentation-pg'),
      import('@opentelemetry/instrumentation-ioredis'),
    ]);
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
  return {
    tracing,
    shutdown: async () => {
      await sdk.shutdown();
    },
  };
}

/**
 * What NodeSDK.start() registers when every exporter is off, without loading the SDK.
 *
 * The propagators come from their own files of @opentelemetry/core (it has no exports map, and
 * the last test of test/core/telemetry.test.ts fails if they move): its index loads 32 files,
 * these three a handful. Importing the index took 21-23 ms of CPU in a fresh process, the three
 * files 5-8 ms (three each, 2026-11-29 04:24, load 20; @opentelemetry/api and
 * context-async-hooks imported first, as here), in every untraced API, master and worker start:
 *   node_modules/.bin/node --input-type=module -e "await import('@opentelemetry/api'); await import('@opentelemetry/context-async-hooks'); const c0=process.cpuUsage(); await import('@opentelemetry/core'); console.log(process.cpuUsage(c0))"
 * This file's import and startTelemetry() together, six fresh processes each in turn on the
 * suite's build (test/helpers/service-build.ts) before and after: 41-49 ms, then 24-32 ms
 * (04:26, load 13-19), timing `await (await import(B/services/core/telemetry/tracing.js)).startTelemetry('x')`.
 */
async function untraced(): Promise<Telemetry> {
  const [
    { AsyncLocalStorageContextManager },
    { CompositePropagator },
    { W3CBaggagePropagator },
    { W3CTraceContextPropagator },
  ] = await Promise.all([
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core/build/src/propagation/composite.js'),
    import('@opentelemetry/core/build/src/baggage/propagation/W3CBaggagePropagator.js'),
    import('@opentelemetry/core/build/src/trace/W3CTraceContextPropagator.js'),
  ]);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  return { tracing: false, shutdown: async () => {} };
}
