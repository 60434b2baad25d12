// The paths the platform itself calls on every process: Kubernetes's probes and Prometheus's
// scrapes. They need no session, are never rate limited and are not traced. (No imports:
// telemetry loads this before anything it instruments.)
export const PLATFORM_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);
