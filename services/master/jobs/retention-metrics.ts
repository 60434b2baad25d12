// What the retention job shows on the master's /metrics, beside the jobs' own
// (flotilla_jobs_duration_seconds{queue="retention"} says how long its runs take):
// - flotilla_retention_deleted_total{kind}: rows this master's runs deleted, by kind
//   (log_chunks, logs marked deleted, artifacts, artifact_bytes, build_data, builds,
//   buildrequests, buildsets, changes, audit log rows). Sum over masters.
// - flotilla_retention_unfinished_runs_total: runs that stopped at max_run_seconds (or at a
//   stop of the master) with work left; a rate that never falls means the cleanup falls behind.
import { Counter, type Registry } from 'prom-client';

export const RETENTION_KINDS = [
  'log_chunks',
  'logs',
  'artifacts',
  'artifact_bytes',
  'build_data',
  'builds',
  'buildrequests',
  'buildsets',
  'changes',
  'audit',
  // Objects deleted from the object store (moved logs), not rows.
  'objects',
] as const;

export type RetentionKind = (typeof RETENTION_KINDS)[number];

export type RetentionCounts = Record<RetentionKind, number>;

export const noCounts = (): RetentionCounts =>
  Object.fromEntries(RETENTION_KINDS.map((k) => [k, 0])) as RetentionCounts;

export class RetentionMetrics {
  private readonly deleted: Counter<'kind'>;
  private readonly unfinished: Counter;

  constructor(registry: Registry) {
    this.deleted = new Counter({
      name: 'flotilla_retention_deleted_total',
      help: 'Rows the retention job deleted on this master, by kind.',
      labelNames: ['kind'],
      registers: [registry],
    });
    this.unfinished = new Counter({
      name: 'flotilla_retention_unfinished_runs_total',
      help: 'Retention runs that stopped with work left (time budget or stop).',
      registers: [registry],
    });
    for (const kind of RETENTION_KINDS) this.deleted.inc({ kind }, 0);
  }

  add(kind: RetentionKind, n: number): void {
    if (n > 0) this.deleted.inc({ kind }, n);
  }

  unfinishedRun(): void {
    this.unfinished.inc();
  }
}
