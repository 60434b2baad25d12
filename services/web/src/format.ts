// Results, durations and times as people read them.

/** Buildbot's result codes. */
export const RESULT_NAMES = ['success', 'warnings', 'failure', 'skipped', 'exception', 'retry', 'cancelled'];

export function resultName(results: number | null | undefined, complete = true): string {
  if (!complete || results === null || results === undefined) return complete ? 'pending' : 'running';
  return RESULT_NAMES[results] ?? `result ${results}`;
}

export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** From start to end, or to now while running. */
export function elapsed(
  start: number | null | undefined,
  end: number | null | undefined,
  now: number,
): string {
  if (!start) return '';
  return duration((end ?? now / 1000) - start);
}

export function ago(epoch: number | null | undefined, now: number): string {
  if (!epoch) return '';
  const s = now / 1000 - epoch;
  if (s < 45) return 'just now';
  return `${duration(s).split(' ')[0]} ago`;
}

export function timestamp(epoch: number | null | undefined): string {
  if (!epoch) return '';
  return new Date(epoch * 1000)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}
