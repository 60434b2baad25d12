// Where a change-watching scheduler is in the stream of changes, kept so that no change is
// lost when the scheduler changes hands.
//
// Buildbot's scheduler hears of changes only while it runs (changes/<id>/new); what came
// while no master ran it is never seen. With several masters that gap is real: a master that
// dies keeps its schedulers until it is expired (ten minutes). So each scheduler records
// the newest change id it has weighed, `flotilla:changes_seen` in its object_state (written
// in the transaction that acts on the change, so a change is acted on once even across a
// hand-over), and whoever runs it next starts there. A record older than catchUpSeconds
// (refreshed while the scheduler runs) belongs to a scheduler that was out of the
// configuration or disabled: it starts from the newest change instead, as Buildbot would.
// Changes of two pods can commit out of id order; events are therefore deduplicated by id,
// not by the record, which only says where to start.
//
// A mixed cluster (docs/compatibility.md): a Buildbot master writes changes that no event of
// ours announces, so the owner also reads the changes table from its position on every
// ownership round (pollFrom), looking back a little for a change that committed after a
// newer one. While another master runs the scheduler, a Flotilla master keeps this record
// current (touchChangesSeen): if that master is a Buildbot one, the changes it never heard
// of (those posted to Flotilla's hooks) are caught up by whichever Flotilla master takes the
// scheduler next; what it built is recognised by its build sets and not built again.

import { lastChangeId, type Tx } from '../../core/data/index.js';
import { getState, setState } from '../../core/data/object-state.js';

/** What a watch needs of its scheduler: the clock, and how old a record may be to catch up from. */
export interface WatchClock {
  /** Seconds since the epoch (fractions allowed). */
  clock: () => number;
  catchUpSeconds: number;
}

export const SEEN_KEY = 'flotilla:changes_seen';
// A running scheduler refreshes its record at least this often (seconds).
export const REFRESH_SECONDS = 60;
const REMEMBERED = 10_000;
// How far back (in change ids) a poll reads again, for changes that committed after a newer
// one: as many as there are change-writing transactions at once, which is few. Far fewer
// than REMEMBERED, so that each of those is still known as weighed.
const LOOK_BACK = 50;

export class ChangeWatch {
  /** The newest change id weighed. */
  position = 0;
  /** Where this watch began: what lies before it was the previous owner's to weigh. */
  private startedAt = 0;
  private savedAt = 0;
  private readonly seen = new Set<number>();

  constructor(
    private readonly objectid: number,
    private readonly deps: WatchClock,
  ) {}

  /** Where to start: the record (catchUp, and recent enough) or the newest change. */
  async begin(tx: Tx, catchUp: boolean): Promise<void> {
    const rec = (await getState(tx.q, this.objectid, SEEN_KEY)) as
      | { changeid?: unknown; at?: unknown }
      | undefined;
    const now = this.deps.clock();
    const usable =
      catchUp &&
      typeof rec?.changeid === 'number' &&
      typeof rec.at === 'number' &&
      now - rec.at <= this.deps.catchUpSeconds;
    this.position = usable ? (rec!.changeid as number) : await lastChangeId(tx.q);
    this.startedAt = this.position;
    await this.save(tx);
  }

  /** Where a poll of the changes table starts reading (after this id). */
  pollFrom(): number {
    return Math.max(this.startedAt, this.position - LOOK_BACK);
  }

  /** False if this change was weighed already; marks it weighed. */
  fresh(changeid: number): boolean {
    if (this.seen.has(changeid)) return false;
    this.seen.add(changeid);
    if (this.seen.size > REMEMBERED) {
      const oldest = this.seen.values().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
    return true;
  }

  advance(changeid: number): void {
    this.position = Math.max(this.position, changeid);
  }

  /** Record the position (inside the transaction that acted on the change, if any). */
  async save(tx: Tx, changeid = 0): Promise<void> {
    this.advance(changeid);
    this.savedAt = this.deps.clock();
    await setState(tx.q, this.objectid, SEEN_KEY, { changeid: this.position, at: this.savedAt });
  }

  get due(): boolean {
    return this.deps.clock() - this.savedAt >= REFRESH_SECONDS;
  }
}
