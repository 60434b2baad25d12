// Buildbot's util.OldBuildCanceller (buildbot/schedulers/canceller.py): when a change arrives,
// the unfinished work of the builders its filters name, on the same branch line as the change,
// is cancelled: pending requests complete CANCELLED, running builds are stopped CANCELLED.
// Buildbot facts kept here:
// - a request counts when at least one of its build set's source stamps passes a filter of
//   its builder, and its line is the (project, codebase, repository, branch key) of a stamp
//   that passed; a build set with a stamp on no branch is never cancelled, nor is anything by
//   a change on no branch;
// - the branch key is the branch, except that Gerrit's refs/changes/<n>/<change>/<patchset>
//   all count as refs/changes/<n>/<change> (every patch set of one review is one line);
// - a stopped build's reason is "Build has been obsoleted by a newer commit" (a pending
//   request's cancel keeps no reason, here as there).
// Buildbot tracks work in memory from its own events; here the database is asked when the
// change is heard, for the unfinished work made before it (not for this change or a later one,
// which a scheduler on another master may have made before this event arrived). Every master
// hears the change; the first to take it in the canceller's state object acts, alone
// (core/data/superseded.ts takeChange), in one transaction with its cancels: a master that
// dies half-way has cancelled nothing, and the next master to hear the change acts.
// Stopping a build is the cluster's control message (control/builds/<id>/stop, published once
// the transaction commits), which the master running the build acts on, wherever it runs.
// Like Buildbot's, a change heard by no master (all down, or its event lost) cancels nothing.

import type { OldBuildCancellerFilterConfig } from '../core/config/master-config/services.js';
import type { ServiceConfig } from '../core/config/master-config.js';
import {
  type ChangeLine,
  cancelBuildRequest,
  changeLine,
  type DataContext,
  type Tx,
  takeChange,
  transact,
  type UnfinishedStamp,
  unfinishedStampsBefore,
} from '../core/data/index.js';
import { stateObjectId } from '../core/data/object-state.js';
import type { Subscribe } from '../core/events/bus.js';
import type { Logger } from '../core/telemetry/logger.js';
import { compileChangeFilter } from './schedulers/change-filter.js';
import { SerialQueue } from './schedulers/scheduler.js';

/** The class name of its state object (Buildbot keeps none for it; ours holds the last change acted on). */
export const CANCELLER_CLASS = 'OldBuildCanceller';
export const BUILD_REASON = 'Build has been obsoleted by a newer commit';

type Line = Pick<UnfinishedStamp, 'project' | 'codebase' | 'repository'> & { branch: string };

/** Buildbot's default branch_key: the patch sets of one Gerrit review are one line. */
export function branchKey(branch: string): string {
  const m = /^refs\/changes\/(\d+)\/(\d+)\/\d+/.exec(branch);
  return m ? `refs/changes/${m[1]}/${m[2]}` : branch;
}

const sameLine = (a: Line, b: Line) =>
  a.project === b.project &&
  a.codebase === b.codebase &&
  a.repository === b.repository &&
  branchKey(a.branch) === branchKey(b.branch);

/** Whether a builder's stamp passes one of the canceller's filters, by builder name. */
function filterSet(filters: readonly OldBuildCancellerFilterConfig[]) {
  const byBuilder = new Map<string, ((s: UnfinishedStamp) => boolean)[]>();
  for (const { builders, ...ss } of filters) {
    const pass = compileChangeFilter(ss);
    const test = (s: UnfinishedStamp) => pass({ ...s, category: null });
    for (const b of Array.isArray(builders) ? builders : [builders])
      byBuilder.set(b, [...(byBuilder.get(b) ?? []), test]);
  }
  return (s: UnfinishedStamp) => (byBuilder.get(s.builder) ?? []).some((t) => t(s));
}

/** The requests a change supersedes, by the rules above, from their stamps. */
export function supersededRequests(
  change: ChangeLine,
  stamps: readonly UnfinishedStamp[],
  passes: (s: UnfinishedStamp) => boolean,
): number[] {
  const changeBranch = change.branch;
  if (changeBranch === null) return [];
  const byRequest = new Map<number, UnfinishedStamp[]>();
  for (const s of stamps) byRequest.set(s.brid, [...(byRequest.get(s.brid) ?? []), s]);
  const out: number[] = [];
  for (const [brid, list] of byRequest) {
    if (list.some((s) => s.branch === null)) continue;
    const lines = list.filter(passes) as Line[];
    if (lines.some((l) => sameLine(l, { ...change, branch: changeBranch }))) out.push(brid);
  }
  return out;
}

interface Canceller {
  name: string;
  objectid: number;
  passes: (s: UnfinishedStamp) => boolean;
}

export interface OldBuildCancellersOptions {
  ctx: DataContext;
  services: readonly ServiceConfig[];
  subscribe: Subscribe;
  log: Logger;
}

/**
 * The change a key announces (`changes/<id>/new`), or null: the cancellers' key filter, apart
 * so that a test checks it against the kinds masters hear (core/events/master-kinds.ts).
 */
export function newChangeOf(k: string): number | null {
  const parts = k.split('/');
  const id = Number(parts[1]);
  if (parts.length !== 3 || parts[0] !== 'changes' || parts[2] !== 'new' || !Number.isSafeInteger(id))
    return null;
  return id;
}

/** The configured cancellers of one master, listening to the event bus for new changes. */
export class OldBuildCancellers {
  private cancellers: Canceller[] = [];
  private unsubscribe: (() => void) | null = null;
  private readonly queue = new SerialQueue();

  constructor(private readonly opts: OldBuildCancellersOptions) {}

  async start(): Promise<void> {
    const configs = this.opts.services.filter((s) => s.type === 'old_build_canceller');
    if (!configs.length) return;
    this.cancellers = await transact(this.opts.ctx, async (tx) => {
      const out: Canceller[] = [];
      for (const c of configs)
        out.push({
          name: c.name,
          objectid: await stateObjectId(tx.q, c.name, CANCELLER_CLASS),
          passes: filterSet(c.filters),
        });
      return out;
    });
    this.unsubscribe = this.opts.subscribe(({ k }) => {
      const id = newChangeOf(k);
      if (id !== null) void this.queue.run(() => this.onChange(id));
    });
  }

  /** Stop listening and wait for the change being handled. */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = null;
    await this.queue.run(async () => {});
  }

  private async onChange(changeid: number): Promise<void> {
    for (const c of this.cancellers) {
      try {
        await transact(this.opts.ctx, (tx) => this.act(tx, c, changeid));
      } catch (err) {
        this.opts.log.warn({ canceller: c.name, changeid, err: (err as Error).message }, 'cancelling failed');
      }
    }
  }

  private async act(tx: Tx, c: Canceller, changeid: number): Promise<void> {
    if (!(await takeChange(tx, c.objectid, changeid))) {
      this.opts.log.debug({ canceller: c.name, changeid }, 'change taken by another master');
      return;
    }
    this.opts.log.debug({ canceller: c.name, changeid }, 'acting on change');
    const change = await changeLine(tx, changeid);
    if (!change || change.branch === null) return;
    const brids = supersededRequests(change, await unfinishedStampsBefore(tx, change), c.passes);
    for (const brid of brids) {
      const outcome = await cancelBuildRequest(tx, brid);
      for (const buildid of outcome.buildsToStop)
        tx.out.add(['control', 'builds', buildid, 'stop'], { reason: BUILD_REASON });
    }
    if (brids.length)
      this.opts.log.info({ canceller: c.name, changeid, requests: brids }, 'cancelled superseded work');
  }
}
