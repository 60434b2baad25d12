// A logger whose lines a test reads back: what a process would write, parsed, in order.
import { Writable } from 'node:stream';
import type { LogLevel } from '../../services/core/config/env.js';
import { createLogger, type Logger } from '../../services/core/telemetry/logger.js';

export function capturedLog(level: LogLevel = 'warn'): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  return { log: createLogger('test', level, sink), lines };
}
