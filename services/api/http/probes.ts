// What Kubernetes and Prometheus ask an API pod. The public port answers liveness, and
// readiness cheaply: one check of the stores a second whatever the number of asks, and no
// detail. The details and /metrics are on the probe port (service.ts), as the masters have
// them. These need no session and must answer while PostgreSQL is away (core/http/platform-paths.ts).
import type { FastifyInstance } from 'fastify';
import type { ConfigVersion } from '../../core/config/version.js';
import { type Check, type Readiness, readiness } from '../../core/health.js';
import { readsSummary } from '../db-routing/read-your-writes.js';
import type { ReadRouter } from '../db-routing/replicas.js';

const READINESS_CACHE_MS = 1000;

declare module 'fastify' {
  interface FastifyInstance {
    /** What the probe port serves (services/api/service.ts): readiness checks and /metrics. */
    probes: {
      checks: readonly Check[];
      metrics: () => Promise<{ contentType: string; body: string }>;
      /** The configuration run, and where reads go: the probe port's /readyz shows them beside the checks. */
      details: () => Record<string, unknown>;
    };
  }
}

/** Readiness asked at most once per `ms`; concurrent asks share one answer. */
function cachedReadiness(checks: readonly Check[], ms: number): () => Promise<Readiness> {
  let last: { at: number; answer: Promise<Readiness> } | null = null;
  return () => {
    const now = Date.now();
    if (!last || now - last.at >= ms) last = { at: now, answer: readiness(checks) };
    return last.answer;
  };
}

export function probeRoutes(
  app: FastifyInstance,
  opts: {
    checks: readonly Check[];
    router: ReadRouter | null;
    metrics: () => Promise<{ contentType: string; body: string }>;
    /** Which configuration the pod runs (core/config/version.ts); null: it runs none. */
    config: ConfigVersion | null;
    /** The process is stopping (its front server drains, http/app-switch.ts): /readyz says 503. */
    stopping?: (() => boolean) | undefined;
  },
): void {
  const { checks, router } = opts;
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  const ready = cachedReadiness(checks, READINESS_CACHE_MS);
  app.get('/readyz', async (_req, reply) => {
    // A stopping pod leaves the rotation at once, whatever the cached answer says.
    const r = closing || opts.stopping?.() ? { ready: false } : await ready();
    // With replicas: where reads go, and how many replicas take them (their names and
    // states are on the probe port).
    const reads = router && readsSummary(router);
    return reply
      .code(r.ready ? 200 : 503)
      .send({ status: r.ready ? 'ready' : 'unavailable', ...(reads ? { reads } : {}) });
  });
  app.decorate('probes', {
    checks,
    metrics: opts.metrics,
    details: () => ({
      ...(opts.config ? { config: opts.config } : {}),
      ...(router ? { reads: router.status() } : {}),
    }),
  });
}
