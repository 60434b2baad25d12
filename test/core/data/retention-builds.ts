// Builds for the retention suites: finished some days ago (request and build set too), or
// still running, with a log of a few chunks and, if asked, an artifact.
import { appendArtifact, completeArtifact, newArtifact } from '../../../services/core/data/artifacts.js';
import { claimBuildRequests, completeBuildRequests } from '../../../services/core/data/buildrequests.js';
import { finishBuild, newBuild } from '../../../services/core/data/builds.js';
import { addLog, appendLog, finishLog } from '../../../services/core/data/logs.js';
import { finishStep, newStep, startStep } from '../../../services/core/data/steps.js';
import { sql } from '../../../services/core/db/pool.js';
import { Results } from '../../../services/core/results.js';
import { type Harness, insertMaster, insertWorker, pendingRequests } from './harness.js';

export const DAY = 86_400;
export const nowS = (): number => Math.floor(Date.now() / 1000);

export interface Made {
  buildid: number;
  stepid: number;
  logid: number;
  brid: number;
}

/**
 * A build on `builderid` with one step and one log of `chunks` chunks; finished `ageDays`
 * ago (its request and build set too), or still running when `running`.
 */
export async function makeBuild(
  h: Harness,
  builderid: number,
  opts: { ageDays?: number; chunks?: number; running?: boolean; artifact?: boolean } = {},
): Promise<Made> {
  const { chunks = 3, ageDays = 0, running = false } = opts;
  return h.run(async (tx) => {
    const masterid = await insertMaster(tx);
    const workerid = await insertWorker(tx);
    const [brid] = await pendingRequests(tx, builderid, 1);
    await claimBuildRequests(tx, [brid!], masterid);
    const { buildid } = await newBuild(tx, { builderid, buildrequestid: brid!, workerid, masterid });
    const { stepid } = await newStep(tx, buildid, 'compile');
    await startStep(tx, stepid);
    const logid = await addLog(tx, stepid, 'stdio', 's');
    for (let i = 0; i < chunks; i++) await appendLog(tx, logid, `oline ${i}\n`);
    if (opts.artifact) {
      const id = await newArtifact(tx, { buildid, stepid, name: 'out.bin', kind: 'file' });
      await appendArtifact(tx, id, new Uint8Array(5000).fill(7));
      await completeArtifact(tx, id);
    }
    if (!running) {
      await finishLog(tx, logid);
      await finishStep(tx, stepid, Results.SUCCESS);
      await finishBuild(tx, buildid, Results.SUCCESS);
      await completeBuildRequests(tx, [brid!], Results.SUCCESS, masterid);
      const at = nowS() - ageDays * DAY;
      await tx.q.query(sql`UPDATE builds SET complete_at = ${at} WHERE id = ${buildid}`);
      await tx.q.query(sql`UPDATE buildrequests SET complete_at = ${at} WHERE id = ${brid}`);
      await tx.q.query(sql`UPDATE buildsets SET complete_at = ${at}
                           WHERE id = (SELECT buildsetid FROM buildrequests WHERE id = ${brid})`);
    } else {
      await tx.q.query(sql`UPDATE builds SET started_at = ${nowS() - ageDays * DAY} WHERE id = ${buildid}`);
    }
    return { buildid, stepid, logid, brid: brid! };
  });
}

export async function tag(h: Harness, builderid: number, name: string): Promise<void> {
  await h.db.pool.query(sql`
    WITH t AS (INSERT INTO tags (name, name_hash) VALUES (${name}, md5(${name}))
               ON CONFLICT (name_hash) DO UPDATE SET name = EXCLUDED.name RETURNING id)
    INSERT INTO builders_tags (builderid, tagid) SELECT ${builderid}, id FROM t`);
}
