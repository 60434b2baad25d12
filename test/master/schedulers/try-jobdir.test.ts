// A Try_Jobdir scheduler refuses a job whose field is longer than the column it is written to,
// naming the field in its log line, and builds nothing of it; the jobs around it are built.
// Before, such a job failed the build set's transaction in PostgreSQL (22001, no field named)
// and stayed in new/, tried again on every round. Jobs are delivered by Debian's real
// `buildbot tryserver` (try-delivery.ts), read by the scheduler of one SchedulerManager.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { capturedLog } from '../../helpers/log-lines.js';
import { eventually } from '../../helpers/wait.js';
import { clusterPerFile, configWith, uniq } from './lib.js';
import { deliverTryJobs } from './try-delivery.js';

const cluster = clusterPerFile();
const jobdir = mkdtempSync(join(tmpdir(), 'flotilla-try-jobdir-'));
// A maildir, as the scheduler makes it: here before it starts, so that its first scan finds
// every job (tryserver writes into tmp/ and renames into new/).
for (const sub of ['new', 'cur', 'tmp']) mkdirSync(join(jobdir, sub));
afterAll(() => rmSync(jobdir, { recursive: true, force: true }));

const job = (jobid: string, more: Record<string, unknown> = {}) => ({
  jobid,
  branch: 'main',
  baserev: 'abc123',
  patch_level: 1,
  patch_body: '--- a/x\n+++ b/x\n',
  repository: 'file:///src',
  project: 'proj',
  who: 'alice',
  comment: '',
  builderNames: ['b1'],
  properties: {},
  ...more,
});

describe('a Try_Jobdir job with a field longer than its column', () => {
  it('is refused with a log line naming the field, nothing built; the jobs around it are', async () => {
    const captured = capturedLog('info');
    const name = uniq('try-dir');
    const prefix = uniq('job');
    const long = [
      ['jobid', { jobid: `${prefix}-${'j'.repeat(256)}` }],
      ['branch', { branch: 'b'.repeat(257) }],
      ['baserev', { baserev: 'r'.repeat(257) }],
      ['repository', { repository: 'x'.repeat(513) }],
      ['project', { project: 'p'.repeat(513) }],
      ['who', { who: 'w'.repeat(250) }],
      ['the property name', { properties: { ['n'.repeat(257)]: 1 } }],
    ] as const;
    deliverTryJobs(jobdir, [
      job(`${prefix}-before`),
      ...long.map(([, fields], i) => job(`${prefix}-long-${i}`, fields)),
      job(`${prefix}-after`),
    ]);
    await cluster().manager(
      configWith(`
  - { type: try_jobdir, name: ${name}, builders: [b1], jobdir: ${JSON.stringify(jobdir)} }`),
      { log: captured.log },
    );
    await eventually(
      async () => readdirSync(join(jobdir, 'new')),
      (left) => left.length === 0,
      { timeoutMs: 30_000 },
    );
    expect(readdirSync(join(jobdir, 'cur'))).toHaveLength(long.length + 2);
    const made = await cluster().h.db.pool.query(
      sql`SELECT external_idstring FROM buildsets WHERE external_idstring LIKE ${`${prefix}-%`}
          ORDER BY external_idstring`,
    );
    expect(made.map((r) => r.external_idstring)).toEqual([`${prefix}-after`, `${prefix}-before`]);
    const refused = captured.lines.filter((l) => l.msg === 'try job refused').map((l) => String(l.reason));
    // The files are taken in name order (tryserver's timestamps): compared as sets.
    const named = (r: string) => long.map(([f]) => f).find((f) => r.startsWith(`${f} `));
    expect(refused.map(named).sort()).toEqual(long.map(([f]) => f).sort());
    for (const r of refused) expect(r).toMatch(/ longer than its column's (256|512) characters$/);
  }, 60_000);
});
