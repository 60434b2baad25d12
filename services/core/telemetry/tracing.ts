// OpenTelemetry for every process. Exporters follow the standard OTEL_* variables; unlike
// the SDK's own default (OTLP to localhost:4318), nothing is exported unless asked for,
// because most installations run no collector and a failing exporter only adds noise.
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

export interface Telemetry {
  shutdown(): Promise<void>;
}

export interface TelemetryOptions {
  /** For tests: export spans here instead of what OTEL_TRACES_EXPORTER says. */
  traceExporter?: SpanExporter;
}

export function startTelemetry(serviceName: string, opts: TelemetryOptions = {}): Telemetry {
  for (const v of ['OTEL_TRACES_EXPORTER', 'OTEL_METRICS_EXPORTER', 'OTEL_LOGS_EXPORTER']) {
    if (!process.env[v]) process.env[v] = 'none';
  }
  process.env.OTEL_SERVICE_NAME ??= serviceName;
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME,
    ...(opts.traceExporter ? { traceExporter: opts.traceExporter } : {}),
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
