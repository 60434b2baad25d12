// Who a client is, for counting its requests: a logged-in user by name (wherever they come
// from), anyone else by address, IPv6 by its /64 (one host usually holds a whole /64, so
// counting single addresses would let it rotate past any limit). The address is Fastify's
// req.ip, which believes X-Forwarded-For only from the proxies www.trust_proxy names.
import { isIPv6 } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { isAnonymous } from '../../core/auth/authz.js';
import { keyPart } from './counters.js';

function expandV6(addr: string): number[] | null {
  let zoneless = addr.split('%')[0]!;
  // A trailing dotted IPv4 (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) is the last two groups.
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(zoneless);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    zoneless = `${zoneless.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = zoneless.includes('::') ? zoneless.split('::') : [zoneless, undefined];
  const parse = (s: string | undefined) => (s ? s.split(':').map((h) => Number.parseInt(h, 16)) : []);
  const a = parse(head);
  const b = parse(tail);
  if (tail === undefined && a.length !== 8) return null;
  const groups = [...a, ...Array(Math.max(0, 8 - a.length - b.length)).fill(0), ...b];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff)
    ? groups
    : null;
}

/** The address part of a client's identity. */
export function addressKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!isIPv6(ip)) return ip;
  const g = expandV6(ip);
  if (!g) return ip;
  return `${g
    .slice(0, 4)
    .map((x) => x.toString(16))
    .join(':')}::/64`;
}

export function clientKey(req: FastifyRequest): string {
  const user = req.userInfo;
  if (!isAnonymous(user)) return `u:${keyPart(String(user!.username))}`;
  return `a:${addressKey(req.ip)}`;
}
