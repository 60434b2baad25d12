// Structured logs (pino) that carry the active trace and span ids, so a log line can be
// found from a trace and the other way round.
import { trace } from '@opentelemetry/api';
import { type DestinationStream, type Logger, pino } from 'pino';
import type { LogLevel } from '../config/env.js';

export type { Logger };

export function createLogger(service: string, level: LogLevel, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    name: service,
    level,
    base: { service, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['password', '*.password', 'req.headers.authorization', 'req.headers.cookie'],
      censor: '***',
    },
    mixin() {
      const ctx = trace.getActiveSpan()?.spanContext();
      return ctx ? { trace_id: ctx.traceId, span_id: ctx.spanId } : {};
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
