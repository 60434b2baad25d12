// auth.remote_user: Buildbot's RemoteUserAuth, a login by a header that an authenticating
// reverse proxy sets (`header`, default REMOTE_USER), matched by `headerRegex` (Python's
// syntax, named groups `(?P<name>...)`; default `(?P<username>[^ @]+)@(?P<realm>[^ @]+)`),
// whose named groups are the user's info. Buildbot believes the header from anyone; here it is
// believed only from the TCP peers `trusted_proxies` lists (addresses or CIDR ranges), so a
// client that reaches the API past the proxy cannot name itself anyone.
import { BlockList, isIP } from 'node:net';
import { z } from 'zod';

/** Python's `(?P<name>` named groups in JavaScript's spelling, anchored at the start as re.match is. */
export function headerPattern(python: string): RegExp {
  return new RegExp(`^(?:${python.replace(/\(\?P</g, '(?<')})`);
}

/** The addresses and ranges as one list (Node's BlockList); throws on a malformed entry. */
export function proxyList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const e of entries) {
    const [addr, bits, extra] = e.split('/');
    const family = isIP(addr ?? '');
    if (!family || extra !== undefined) throw new Error(`${e} is not an address or CIDR range`);
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(addr!, type);
    else {
      const n = Number(bits);
      if (!/^\d+$/.test(bits) || n > (family === 6 ? 128 : 32))
        throw new Error(`${e} has a bad prefix length`);
      list.addSubnet(addr!, n, type);
    }
  }
  return list;
}

const compiles = (s: string) => {
  try {
    return headerPattern(s).source.includes('(?<username>');
  } catch {
    return false;
  }
};

export const remoteUser = z
  .object({
    header: z
      .string()
      .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'expected an HTTP header name')
      .default('REMOTE_USER'),
    headerRegex: z
      .string()
      .refine(compiles, { message: 'expected a regular expression with a named group username' })
      .default('(?P<username>[^ @]+)@(?P<realm>[^ @]+)'),
    trusted_proxies: z
      .array(z.string())
      .min(1)
      .refine(
        (l) => {
          try {
            proxyList(l);
            return true;
          } catch {
            return false;
          }
        },
        { message: 'expected addresses or CIDR ranges (10.0.0.0/8, ::1)' },
      ),
  })
  .strict();
