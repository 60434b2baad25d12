// What a worker shows on /metrics (its probe port; Prometheus text, prom-client):
//
// - flotilla_worker_commands_running: commands this worker runs now.
// - flotilla_worker_commands_total: commands it has started.
// - flotilla_worker_output_bytes_total and flotilla_worker_output_lines_total: build output
//   sent to the master (stdout, stderr and extra logs; rate() is bytes or lines a second).
// - flotilla_worker_connected: 1 while attached to a master.
// - flotilla_worker_reconnects_total: times it attached to a master again after the first
//   (a master restarting, the network failing); a steady rise means a flapping link.
// - Node's process metrics (memory, CPU, event loop lag, GC).
import { Counter, Gauge, Registry } from 'prom-client';
import type { WorkerToMaster } from '../core/protocol/messages.js';
import { collectProcessMetrics } from '../core/telemetry/process-metrics.js';

export interface WorkerMetricsSources {
  running: () => number;
  connected: () => boolean;
}

export class WorkerMetrics {
  readonly registry = new Registry();
  private readonly started: Counter;
  private readonly bytes: Counter;
  private readonly lines: Counter;
  private readonly reconnects: Counter;
  private attached = 0;

  constructor(sources: WorkerMetricsSources) {
    const registers = [this.registry];
    collectProcessMetrics(this.registry);
    new Gauge({
      name: 'flotilla_worker_commands_running',
      help: 'Commands this worker runs now.',
      registers,
      collect() {
        this.set(sources.running());
      },
    });
    new Gauge({
      name: 'flotilla_worker_connected',
      help: 'Whether this worker is attached to a master (1) or not (0).',
      registers,
      collect() {
        this.set(sources.connected() ? 1 : 0);
      },
    });
    this.started = new Counter({
      name: 'flotilla_worker_commands_total',
      help: 'Commands started.',
      registers,
    });
    this.bytes = new Counter({
      name: 'flotilla_worker_output_bytes_total',
      help: 'Bytes of build output sent to the master.',
      registers,
    });
    this.lines = new Counter({
      name: 'flotilla_worker_output_lines_total',
      help: 'Lines of build output sent to the master.',
      registers,
    });
    this.reconnects = new Counter({
      name: 'flotilla_worker_reconnects_total',
      help: 'Times this worker attached to a master again after its first connection.',
      registers,
    });
  }

  /** A message the worker sends: counts commands' output. */
  sent(m: WorkerToMaster): void {
    if (m.type !== 'output') return;
    this.bytes.inc(Buffer.byteLength(m.text));
    let n = 0;
    for (let i = m.text.indexOf('\n'); i !== -1; i = m.text.indexOf('\n', i + 1)) n++;
    this.lines.inc(n);
  }

  commandStarted(): void {
    this.started.inc();
  }

  connected(): void {
    if (this.attached++ > 0) this.reconnects.inc();
  }
}
