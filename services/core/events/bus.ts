// The event bus: every event (Buildbot routing key + message) and every control message is
// published on one Redis channel, so that any API pod or master receives what any other
// produced. Events are published after their transaction commits; losing Redis loses
// liveness, never data.
import type { Redis } from 'ioredis';

export const EVENTS_CHANNEL = 'flotilla:events';

export type RoutingKey = readonly (string | number)[];

export interface BusMessage {
  /** Routing key joined with '/', as Buildbot's /ws shows it (`builds/12/new`). */
  k: string;
  m: unknown;
}

export function keyString(key: RoutingKey): string {
  return key.map(String).join('/');
}

export async function publish(redis: Redis, key: RoutingKey, message: unknown): Promise<void> {
  const payload: BusMessage = { k: keyString(key), m: message };
  await redis.publish(EVENTS_CHANNEL, JSON.stringify(payload));
}
