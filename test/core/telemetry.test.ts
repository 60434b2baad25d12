// OpenTelemetry is on in every process with exporters off by default, and pino log lines
// written inside a span carry its trace and span ids.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../services/core/telemetry/logger.js';
import { applyExporterDefaults, startTelemetry } from '../../services/core/telemetry/tracing.js';
import { SERVICES_BUILD_ENV } from '../helpers/service-build.js';

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

  // Untraced, the SDK is not loaded (tracing.ts says why), but what it would register still
  // is: a trace context from a traced process reaches the log lines. Only a fresh process
  // shows it, since this one has the SDK on.
  it('without an exporter, still carries a trace context that comes in into log lines', () => {
    const root = resolve(import.meta.dirname, '../..');
    const built = process.env[SERVICES_BUILD_ENV];
    const mod = (path: string) =>
      JSON.stringify(
        pathToFileURL(built ? join(built, path.replace(/\.ts$/, '.js')) : join(root, path)).href,
      );
    const traceId = randomBytes(16).toString('hex');
    const spanId = randomBytes(8).toString('hex');
    const script = `
      const { startTelemetry } = await import(${mod('services/core/telemetry/tracing.ts')});
      const { createLogger } = await import(${mod('services/core/telemetry/logger.ts')});
      const { context, propagation, ROOT_CONTEXT } = await import('@opentelemetry/api');
      const telemetry = await startTelemetry('flotilla-test');
      const parent = propagation.extract(ROOT_CONTEXT, { traceparent: '00-${traceId}-${spanId}-01' });
      context.with(parent, () => createLogger('test', 'info').info('inside'));
      console.log(JSON.stringify({ tracing: telemetry.tracing, fields: propagation.fields() }));`;
    const env = { ...process.env };
    for (const v of Object.keys(env)) if (v.startsWith('OTEL_')) delete env[v];
    const out = execFileSync(
      process.execPath,
      [...(built ? [] : ['--import', 'tsx']), '--input-type=module', '-e', script],
      {
        cwd: root,
        env,
        encoding: 'utf8',
      },
    );
    // pino writes stdout through its own stream and the script through console.log: the
    // two lines can come in either order (in a full run they came swapped).
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.find((l) => l.msg === 'inside')).toMatchObject({ trace_id: traceId, span_id: spanId });
    expect(lines.find((l) => 'fields' in l)).toEqual({
      tracing: false,
      fields: ['traceparent', 'tracestate', 'baggage'],
    });
  });

  // Instrumentation patches only what loads after it (tracing.ts), so a main.ts loads nothing
  // else statically: the master's once imported core/config/env.ts first, which loads ioredis
  // through core/redis.ts (services/master/main.ts says what that did).
  it('is the only static import of each process main', () => {
    const root = resolve(import.meta.dirname, '../..');
    for (const service of ['api', 'master', 'worker']) {
      const text = readFileSync(join(root, 'services', service, 'main.ts'), 'utf8');
      const imports = [...text.matchAll(/^import\s[^;]*?['"]([^'"]+)['"]/gm)].map((m) => m[1]);
      expect({ service, imports }).toEqual({ service, imports: ['../core/telemetry/tracing.js'] });
    }
  });
});
