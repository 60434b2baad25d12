// The fleet scenario's shape (issue 35 §1): BUILDERS builders, each a one-step `true` build,
// and WORKERS workers of one slot; builder b runs on workers b, b+1 and b+2 (mod WORKERS),
// and worker w connects to master w mod MASTERS, so that every master can run every
// builder and each holds a third of the workers. One force scheduler over all builders
// (a force names the one it wants with builderNames).
export const WORKER_PASSWORD = 'fleet';
export const FORCE_SCHEDULER = 'fleet';

export interface FleetShape {
  builders: number;
  workers: number;
  masters: number;
}

const pad = (n: number) => String(n).padStart(4, '0');
export const workerName = (i: number) => `f${pad(i)}`;
export const builderName = (i: number) => `fleet-${pad(i)}`;

/** Which master (0-based) worker i connects to. */
export const masterOf = (worker: number, s: FleetShape) => worker % s.masters;

export function fleetYaml(s: FleetShape): string {
  const lines = ['title: Flotilla fleet benchmark', 'workers:'];
  for (let w = 0; w < s.workers; w++)
    lines.push(`  - { name: ${workerName(w)}, password: ${WORKER_PASSWORD}, max_builds: 1 }`);
  lines.push('builders:');
  for (let b = 0; b < s.builders; b++) {
    const ws = [0, 1, 2].map((k) => workerName((b + k) % s.workers));
    lines.push(
      `  - { name: ${builderName(b)}, workers: [${ws.join(', ')}], steps: [{ type: shell, name: ok, command: "true" }] }`,
    );
  }
  lines.push('force_schedulers:');
  lines.push(
    `  - { name: ${FORCE_SCHEDULER}, builders: [${Array.from({ length: s.builders }, (_, b) => builderName(b)).join(', ')}] }`,
  );
  // Phase C (the fleet_forces scenario) holds an events socket per force waiting for its build,
  // all from this one address: at 80% of the start rate, with the queue's wait, more than the
  // 20 a client may hold (www.events) that stand for many people's browsers, not one.
  // Phase D's 6,000 reads come from this one address too, in well under the rate limit's
  // window once the reads got faster: the third class was answered 429 whole at 2026-11-29
  // 07:07 (320 of 2,000 at 04:44), and measured the refusal, not the read.
  lines.push(
    'www:',
    '  events: { max_connections_per_client: 5000 }',
    '  rate_limit: { requests: 1000000, window_seconds: 60 }',
  );
  return `${lines.join('\n')}\n`;
}
