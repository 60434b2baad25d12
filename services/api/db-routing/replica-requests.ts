// What a request brings to reads on replicas (replicas.ts): its client's write position
// (read-your-writes). Which pages it may keep in the page cache: ../cache/replica-policy.ts.
import { lsnText, lsnValue } from '../../core/data/replication.js';

/** The client's write position: cookie (browsers, sessions) and header (scripts). */
export const WAL_COOKIE = 'flotilla_wal';
export const WAL_HEADER = 'x-flotilla-wal-position';
const WAL_COOKIE_MAX_AGE_S = 3600;

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
