// OpenTelemetry is on in every process with exporters off by default, and pino log lines
// written inside a span carry its trace and span ids.
import { Writable } from 'node:stream';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../services/core/telemetry/logger.js';
import { applyExporterDefaults, startTelemetry } from '../../services/core/telemetry/tracing.js';

const exporter = new InMemorySpanExporter();
const telemetry = await startTelemetry('flotilla-test', {
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});
afterAll(() => telemetry.shutdown());

describe('telemetry', () => {
  it('leaves exporters off unless OTEL_* asks for them', () => {
    const env: Record<string, string | undefined> = { OTEL_METRICS_EXPORTER: 'prometheus' };
    applyExporterDefaults(env);
    expect(env).toEqual({
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_METRICS_EXPORTER: 'prometheus',
      OTEL_LOGS_EXPORTER: 'none',
    });
  });

  it('puts the trace id in log lines written inside a span, and exports the span', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const log = createLogger('test', 'info', sink);
    let ids: { traceId: string; spanId: string } | undefined;
    trace.getTracer('test').startActiveSpan('work', (span) => {
      ids = span.spanContext();
      log.info('inside');
      span.end();
    });
    log.info('outside');
    await new Promise((r) => setImmediate(r));
    const [inside, outside] = lines.map((l) => JSON.parse(l));
    expect(inside).toMatchObject({
      msg: 'inside',
      service: 'test',
      trace_id: ids!.traceId,
      span_id: ids!.spanId,
    });
    expect(outside.trace_id).toBeUndefined();
    await vi.waitFor(() => expect(exporter.getFinishedSpans().map((s) => s.name)).toContain('work'));
  });
});
