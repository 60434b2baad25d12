// A wait of the fleet's run that stops moving says why: what the workers, the database and each
// master's /metrics read at that moment. Two runs (2026-11-29 08:55 and 09:24) waited out their
// ten minutes with the masters idle, one for its held builds to end, one for a burst's slots,
// and printed only that they timed out.
import type { Queryable } from '../../services/core/db/pool.js';
import { sql } from '../../services/core/db/pool.js';
import { unclaimed } from './queue.js';
import type { WorkerFleet } from './workers.js';

/** Gives up on a wait once `progress()` has not moved for `seconds`, with what `state()` read then. */
export function stallGuard(
  progress: () => number,
  state: () => Promise<string>,
  seconds = Number(process.env.STALL_SECONDS ?? 120),
): { moved: () => Promise<void>; gaveUp: () => string | undefined } {
  let last = Number.NaN;
  let since = Date.now();
  let reason: string | undefined;
  return {
    async moved() {
      const now = progress();
      if (now !== last) {
        last = now;
        since = Date.now();
      } else if (!reason && Date.now() - since > seconds * 1000)
        reason = `nothing moved for ${seconds} s (at ${now})\n${await state()}`;
    },
    gaveUp: () => reason,
  };
}

const METRICS =
  /^(flotilla_builds_running|flotilla_workers_connected|flotilla_claim_pass_seconds_count|flotilla_claims_total|flotilla_events_waiting)\S* /;

/** The fleet as the workers, the database and the masters' /metrics see it. */
export async function fleetState(db: Queryable, workers: WorkerFleet, probePorts: number[]): Promise<string> {
  const lines = [`generated workers: ${workers.connected} connected, ${workers.commands} commands so far`];
  const [open] = await db.query(sql`SELECT count(*)::int AS n FROM builds WHERE complete_at IS NULL`);
  lines.push(`builds open ${open.n}; requests pending and unclaimed ${await unclaimed(db)}`);
  for (const m of await db.query(sql`SELECT m.name, m.active, m.last_active,
      (SELECT count(*)::int FROM buildrequest_claims c JOIN buildrequests r ON r.id = c.brid
        WHERE c.masterid = m.id AND r.complete = 0) AS claimed
      FROM masters m ORDER BY m.name`))
    lines.push(
      `master ${m.name}: active ${m.active}, last active ${m.last_active}, holds ${m.claimed} open claims`,
    );
  // Sessions inside a transaction or waiting: a lock held by one that waits elsewhere stops all.
  for (const a of await db.query(sql`SELECT pid, application_name AS app, state, wait_event_type AS wt,
      wait_event AS w, round(extract(epoch FROM now() - xact_start)::numeric, 1) AS xact_s,
      pg_blocking_pids(pid) AS blocked_by, left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 120) AS q
      FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
        AND (state <> 'idle' OR xact_start IS NOT NULL) ORDER BY xact_start NULLS LAST LIMIT 40`))
    lines.push(
      `session ${a.pid} ${a.app || '-'}: ${a.state}${a.wt ? ` waiting ${a.wt}/${a.w}` : ''}, transaction ${a.xact_s ?? '-'} s, blocked by [${a.blocked_by}]: ${a.q}`,
    );
  for (const port of probePorts) {
    const text = await fetch(`http://127.0.0.1:${port}/metrics`)
      .then((r) => r.text())
      .catch((err: Error) => `unreadable: ${err.message}`);
    const read = text.split('\n').filter((l) => METRICS.test(l));
    lines.push(`probe ${port}: ${read.join('; ') || text.slice(0, 200)}`);
  }
  return lines.join('\n');
}
