// Steps: newStep, startStep, setStepStateString, addStepURL, finishStep, endUnfinishedSteps.
//
// Buildbot facts (buildbot/db/steps.py, buildbot/data/steps.py):
// - a build's steps are numbered from 0 (max(number) + 1), state string `pending`;
// - a name already used in the build becomes name[:50 - len('_N')] + '_N' for the first free
//   N from 1 (so `compile`, `compile_1`, `compile_2`); steps.name is varchar(50), so a longer
//   name is refused here rather than failing in PostgreSQL;
// - addURL appends {name, url} to urls_json unless that exact pair is there already
//   (read-modify-write; we hold the step's row lock for it);
// - events carry the step entity under builds/<buildid>/steps/<stepid> and steps/<stepid>:
//   `new`, `started`, `updated` (state string and URLs), `finished`.
// newStep locks the build's row, so two callers adding steps to one build number and name
// them one after the other (Buildbot relies on a single master per build instead).
// finishStep finishes a step once, like finishBuild.
import { many, maybeOne, type SQLQuery, sql } from '../db/pool.js';
import { step as stepEntity } from '../entities/step.js';
import { invalid, noSuch } from '../errors.js';
import { stepKeys } from '../events/keys.js';
import { codePoints } from '../identifiers.js';
import { lockBuild } from './build-lock.js';
import { entity, writtenEntity } from './entities.js';
import { finishLog } from './logs.js';
import { now, type Tx } from './transaction.js';

const MAX_NAME = 50;

async function emit(tx: Tx, stepid: number, event: string): Promise<void> {
  const s = await entity<{ stepid: number; buildid: number }>(tx.q, stepEntity, stepid);
  if (!s) throw noSuch(`step ${stepid}`);
  tx.out.addAll(stepKeys(s), event, s);
}

type StepEntity = { stepid: number; buildid: number; number: number; name: string };

/** A write of one step (RETURNING *) and its event: the step as written; undefined when no row was written. */
async function written(tx: Tx, write: SQLQuery, event: string): Promise<StepEntity | undefined> {
  const s = await writtenEntity<StepEntity>(tx.q, stepEntity, write);
  if (s) tx.out.addAll(stepKeys(s), event, s);
  return s;
}

/** An UPDATE of one step and its event, or NOT_FOUND when there was no such step. */
async function updated(tx: Tx, stepid: number, write: SQLQuery, event: string): Promise<void> {
  if (!(await written(tx, write, event))) throw noSuch(`step ${stepid}`);
}

/**
 * A new step of the build. `started`: written started (newStep and startStep in one INSERT,
 * its `new` event carrying the step as new, then `started` as written): a statement and its
 * triggers fewer a step (load/results/fleet.md, 2026-11-29 00:40).
 */
export async function newStep(
  tx: Tx,
  buildid: number,
  name: string,
  options: { started?: boolean } = {},
): Promise<{ stepid: number; number: number; name: string }> {
  if (codePoints(name) > MAX_NAME)
    throw invalid(`step name ${JSON.stringify(name)} is longer than ${MAX_NAME} characters`);
  await lockBuild(tx, buildid);
  // The number and the unique name are chosen by the INSERT itself, from the build's steps as
  // its statement sees them (after the build's row lock above): one round trip a step fewer
  // than a read of the build's steps first (a build start's statements 24 -> 22). PostgreSQL's
  // own work is the same: the start's statements alone ran 639-723 a second with it and
  // 692-754 without, pgbench in turns (load/results/fleet.md, 2026-11-29 12:00). left() counts
  // characters, as headCodePoints counts code points: the suffixed name stays within MAX_NAME.
  // At most one candidate per existing step can be taken, so count + 1 suffice.
  const row = await writtenEntity<StepEntity>(
    tx.q,
    stepEntity,
    sql`INSERT INTO steps (number, name, buildid, started_at, complete_at, state_string, results, urls_json, hidden)
        SELECT (SELECT coalesce(max(number), -1) + 1 FROM steps WHERE buildid = ${buildid}),
          CASE WHEN NOT EXISTS (SELECT 1 FROM steps WHERE buildid = ${buildid} AND name = ${name}::text)
            THEN ${name}::text
            ELSE (SELECT x.candidate
              FROM generate_series(1, 1 + (SELECT count(*) FROM steps WHERE buildid = ${buildid})::int) AS k(n)
              CROSS JOIN LATERAL (SELECT left(${name}::text, ${MAX_NAME} - length('_' || k.n)) || '_' || k.n AS candidate) x
              WHERE NOT EXISTS (SELECT 1 FROM steps s WHERE s.buildid = ${buildid} AND s.name = x.candidate)
              ORDER BY k.n LIMIT 1)
          END,
          ${buildid}, ${options.started ? now() : null}, NULL, 'pending', NULL, '[]', 0
        RETURNING *`,
  );
  // An INSERT ... SELECT of one row without ON CONFLICT writes its row or fails.
  if (!row) throw new Error(`step ${name} of build ${buildid} was not written`);
  tx.out.addAll(stepKeys(row), 'new', options.started ? { ...row, started_at: null } : row);
  if (options.started) tx.out.addAll(stepKeys(row), 'started', row);
  return { stepid: row.stepid, number: row.number, name: row.name };
}

export async function startStep(tx: Tx, stepid: number): Promise<void> {
  await updated(
    tx,
    stepid,
    sql`UPDATE steps SET started_at = ${now()} WHERE id = ${stepid} RETURNING *`,
    'started',
  );
}

export async function setStepStateString(tx: Tx, stepid: number, stateString: string): Promise<void> {
  await updated(
    tx,
    stepid,
    sql`UPDATE steps SET state_string = ${stateString} WHERE id = ${stepid} RETURNING *`,
    'updated',
  );
}

export async function addStepURL(tx: Tx, stepid: number, name: string, url: string): Promise<void> {
  const step = await maybeOne<{ urls: unknown }>(
    tx.q,
    sql`SELECT flotilla.try_json(urls_json) AS urls FROM steps WHERE id = ${stepid} FOR NO KEY UPDATE`,
  );
  if (!step) throw noSuch(`step ${stepid}`);
  const urls: { name?: unknown; url?: unknown }[] = Array.isArray(step.urls) ? step.urls : [];
  if (!urls.some((u) => u?.name === name && u?.url === url && Object.keys(u).length === 2)) {
    urls.push({ name, url });
    await tx.q.query(sql`UPDATE steps SET urls_json = ${JSON.stringify(urls)} WHERE id = ${stepid}`);
  }
  await emit(tx, stepid, 'updated');
}

/**
 * setStepStateString and finishStep in one UPDATE: its `updated` event carries the step with
 * its state string and not yet finished (hidden is written only at a finish), then `finished`
 * as written; a statement and its triggers fewer a step. A step finished already gets its
 * state string alone, as the two calls would have left it; false then.
 */
export async function endStep(
  tx: Tx,
  stepid: number,
  stateString: string,
  results: number,
  hidden = false,
): Promise<boolean> {
  const s = await writtenEntity<StepEntity>(
    tx.q,
    stepEntity,
    sql`UPDATE steps SET state_string = ${stateString}, complete_at = ${now()}, results = ${results},
          hidden = ${hidden ? 1 : 0}
        WHERE id = ${stepid} AND complete_at IS NULL RETURNING *`,
  );
  if (!s) {
    await setStepStateString(tx, stepid, stateString);
    return false;
  }
  const keys = stepKeys(s);
  tx.out.addAll(keys, 'updated', { ...s, complete: false, complete_at: null, results: null, hidden: false });
  tx.out.addAll(keys, 'finished', s);
  return true;
}

/** Finish a step now; false (and no event) if it was finished already. */
export async function finishStep(tx: Tx, stepid: number, results: number, hidden = false): Promise<boolean> {
  const finished = await written(
    tx,
    sql`UPDATE steps SET complete_at = ${now()}, results = ${results}, hidden = ${hidden ? 1 : 0}
        WHERE id = ${stepid} AND complete_at IS NULL RETURNING *`,
    'finished',
  );
  if (!finished) {
    const exists = await maybeOne<{ id: number }>(tx.q, sql`SELECT id FROM steps WHERE id = ${stepid}`);
    if (!exists) throw noSuch(`step ${stepid}`);
    return false;
  }
  return true;
}

/**
 * End what a build left running when it ended otherwise than by its steps' own ends (its
 * master lost, the database away past the lease, an internal error): its open logs finished,
 * its unfinished steps finished with `results`, each with its events. Returns the logs it
 * finished, whose compression is now due.
 */
export async function endUnfinishedSteps(tx: Tx, buildid: number, results: number): Promise<number[]> {
  const logs = await many<{ id: number }>(
    tx.q,
    sql`SELECT l.id FROM logs l JOIN steps s ON s.id = l.stepid
        WHERE s.buildid = ${buildid} AND l.complete = 0 ORDER BY s.number, l.id`,
  );
  for (const log of logs) await finishLog(tx, log.id);
  const steps = await many<{ id: number }>(
    tx.q,
    sql`SELECT id FROM steps WHERE buildid = ${buildid} AND results IS NULL ORDER BY number`,
  );
  for (const step of steps) await finishStep(tx, step.id, results, false);
  return logs.map((l) => l.id);
}
