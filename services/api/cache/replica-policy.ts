// The page cache with reads on replicas (../db-routing/replicas.ts): a page read from a
// replica is kept only when that replica had every noticed write to its tables.
import type { ReadRouter } from '../db-routing/replicas.js';
import type { PagePolicy } from './page-cache.js';
import type { WriteNotices } from './write-notices.js';

/**
 * Which pages the page cache may keep, and when write notices may vouch for a kept page, with
 * reads on replicas. Notices come from the primary: a page read from a replica is kept only
 * when the replica had, before the read, replayed past every noticed write to the page's
 * tables (WriteNotices.positionFor); later writes expire it as on the primary. Without
 * notices, a kept page is checked against the primary's write version on every hit, which a
 * replica's page never matches (the version names its server), so none is kept. A request
 * carrying a client's write position trusts the notices only once they cover that position.
 */
export function replicaPagePolicy(router: ReadRouter, notices: WriteNotices | null): PagePolicy {
  return {
    mayKeep(page) {
      const c = router.current();
      if (!c?.replica) return true;
      const need = notices?.positionFor(page.tables, page.mark) ?? null;
      return need !== null && c.replayed !== null && c.replayed >= need;
    },
    noticesCover() {
      const min = router.minLsn();
      return min === null || (notices?.noticedThrough() ?? -1n) >= min;
    },
  };
}
