// The event publisher's state on /metrics, for every process that commits events (API pods
// and masters; events/publisher.ts sends them in the background):
// - flotilla_events_waiting: committed events Redis has not confirmed yet. It grows while Redis
//   is away and falls back to 0 once it answers: a level that stays up is an outage of the
//   event bus that clients see as late updates.
// - flotilla_events_published_total: events Redis confirmed.
// - flotilla_events_dropped_total: events never sent: the oldest past the publisher's bound
//   while Redis was away (announced to consumers with one flotilla/events/lost event when it
//   answered again), or those waiting when the connection closed for good. Any increase means
//   clients had to reload what they showed.
import type { Redis } from 'ioredis';
import { Counter, Gauge, type Registry } from 'prom-client';
import { publisherFor } from './publisher.js';

export function collectEventMetrics(registry: Registry, redis: Redis): void {
  const registers = [registry];
  // Read at scrape time: the publisher of this connection, made by its first commit if not yet.
  const publisher = () => publisherFor(redis);
  new Gauge({
    name: 'flotilla_events_waiting',
    help: 'Committed events waiting for Redis to confirm them.',
    registers,
    collect() {
      this.set(publisher().pending);
    },
  });
  new Counter({
    name: 'flotilla_events_published_total',
    help: 'Events Redis confirmed.',
    registers,
    collect() {
      this.reset();
      this.inc(publisher().published);
    },
  });
  new Counter({
    name: 'flotilla_events_dropped_total',
    help: 'Events never sent (past the bound while Redis was away, or at the end of the connection).',
    registers,
    collect() {
      this.reset();
      this.inc(publisher().dropped);
    },
  });
}
