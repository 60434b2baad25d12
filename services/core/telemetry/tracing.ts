// OpenTelemetry for every process. Exporters follow the standard OTEL_* variables; unlike
// the SDK's own default (OTLP to localhost:4318), nothing is exported unless asked for,
// because most installations run no collector and a failing exporter only adds noise.
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';

export interface Telemetry {
  shutdown(): Promise<void>;
}

export interface TelemetryOptions {
  /** For tests: hand spans here instead of to what OTEL_TRACES_EXPORTER says. */
  spanProcessors?: SpanProcessor[];
}

/** Exporters the environment does not name are off ('none'). */
export function applyExporterDefaults(
  env: Record<string, string | undefined>,
  skip: readonly string[] = [],
): void {
  for (const v of ['OTEL_TRACES_EXPORTER', 'OTEL_METRICS_EXPORTER', 'OTEL_LOGS_EXPORTER']) {
    if (!env[v] && !skip.includes(v)) env[v] = 'none';
  }
}

export function startTelemetry(serviceName: string, opts: TelemetryOptions = {}): Telemetry {
  applyExporterDefaults(process.env, opts.spanProcessors ? ['OTEL_TRACES_EXPORTER'] : []);
  process.env.OTEL_SERVICE_NAME ??= serviceName;
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME,
    ...(opts.spanProcessors ? { spanProcessors: opts.spanProcessors } : {}),
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
