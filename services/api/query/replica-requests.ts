// What a request brings to reads on replicas (replicas.ts): its client's write position, and
// which pages it may keep in the page cache.
import { lsnText, lsnValue } from '../../core/data/replication.js';
import type { PagePolicy } from '../read/page-cache.js';
import type { ReadRouter } from './replicas.js';
import type { WriteNotices } from './write-notices.js';

/** The client's write position: cookie (browsers, sessions) and header (scripts). */
export const WAL_COOKIE = 'flotilla_wal';
export const WAL_HEADER = 'x-flotilla-wal-position';
const WAL_COOKIE_MAX_AGE_S = 3600;

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

/** The write position a request carries (header first, then cookie); null when none or unreadable. */
export function requestWalPosition(headers: Record<string, string | string[] | undefined>): bigint | null {
  const header = headers[WAL_HEADER];
  const fromHeader = typeof header === 'string' ? header : null;
  const cookie = typeof headers.cookie === 'string' ? headers.cookie : '';
  const m = new RegExp(`(?:^|;\\s*)${WAL_COOKIE}=([0-9A-Fa-f]{1,8}/[0-9A-Fa-f]{1,8})(?:;|$)`).exec(cookie);
  for (const text of [fromHeader, m?.[1] ?? null]) {
    if (text === null) continue;
    try {
      return lsnValue(text.trim());
    } catch {
      // not a position: as if absent
    }
  }
  return null;
}

export function walCookie(lsn: bigint, secure: boolean): string {
  return `${WAL_COOKIE}=${lsnText(lsn)}; Path=/; Max-Age=${WAL_COOKIE_MAX_AGE_S}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}
