// What a stopped part may have left running in the test's own process: timers that the
// services' code set and nobody cleared (a heartbeat, a poll, a renewal interval), and the
// Redis connections a process names (CLIENT LIST). Used by the tests that fail a start at
// each part and look for what is still running (issue 29 §3).
import { createHook } from 'node:async_hooks';
import { Redis } from 'ioredis';

/** The services' file and line that set a timer, or null if the timer is a library's own. */
function servicesFrame(stack: string): string | null {
  for (const line of stack.split('\n').slice(1)) {
    if (line.includes('(node:') || line.includes(' node:') || line.includes('/test/helpers/leftovers'))
      continue;
    if (line.includes('/node_modules/')) return null;
    return /\/(services\/[^):]+:\d+)/.exec(line)?.[1] ?? null;
  }
  return null;
}

/** Pending timers set by services/ code while it watches (async_hooks: init, then destroy once cleared or run). */
export class TimerWatch {
  private readonly live = new Map<number, string>();
  private readonly hook = createHook({
    init: (id, type) => {
      if (type !== 'Timeout') return;
      const where = servicesFrame(new Error().stack ?? '');
      if (where) this.live.set(id, where);
    },
    destroy: (id) => {
      this.live.delete(id);
    },
  });

  start(): this {
    this.live.clear();
    this.hook.enable();
    return this;
  }

  stop(): void {
    this.hook.disable();
  }

  /** Where each timer still pending was set (services/…:line). */
  pending(): string[] {
    return [...this.live.values()].sort();
  }
}

/** Names of the clients connected to the Redis at `url` whose name starts with `prefix`. */
export async function redisClients(url: string, prefix: string): Promise<string[]> {
  const r = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const list = (await r.call('CLIENT', 'LIST')) as string;
    return list
      .split('\n')
      .map((l) => / name=(\S*)/.exec(l)?.[1] ?? '')
      .filter((n) => n.startsWith(prefix))
      .sort();
  } finally {
    r.disconnect();
  }
}
